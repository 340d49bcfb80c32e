"""An OpenAI-compatible server on loopback whose token logprobs come from a known model.

:class:`LogprobServer` serves a :class:`~harness.testing.BigramModel` (``_bigram.py``: a small
deterministic language model whose log-probabilities a test can compute on its own) as an
aiohttp server bound to ``127.0.0.1`` only, in the JSON shapes OpenAI documents:

* ``POST /v1/chat/completions`` with ``logprobs`` / ``top_logprobs`` (at most 20): the
  messages are rendered ``"<|{role}|> {content}\\n"`` each, then ``"<|assistant|>"``, and the
  reply is generated greedily, each token with its ``top_logprobs``;
* ``POST /v1/completions`` with ``echo`` and ``logprobs``: ``prompt`` is a string or a list
  (one choice per prompt, by ``index``); with ``echo`` the prompt's own tokens come back with
  ``token_logprobs`` (the first ``null``) and ``text_offset``;
* ``GET /v1/models``: ``{"object": "list", "data": [{"id": ...}]}``.

``logprobs=False`` makes a server that ignores logprob requests (as some gateways do);
``api_key`` requires ``Authorization: Bearer <key>``; ``fail_with`` answers every completion
request with that status and a body quoting the request (to test redaction). ``calls`` counts
the completion requests served, ``prompts`` the prompts scored.

Run it on its own with ``python -m harness.testing.logprob_server --port 8799``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Literal, Self

from aiohttp import web

from harness.decision._internal import load_json
from harness.serve import ServerShell
from harness.testing._bigram import BigramModel, bigram_chat_text

__all__ = ["LogprobServer"]


class _BadRequest(Exception):
    pass


def _int(body: dict[str, object], name: str, default: int, *, low: int, high: int) -> int:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _BadRequest(f"{name} must be an integer in [{low}, {high}]")
    return value


class LogprobServer(ServerShell):
    """The loopback OpenAI-compatible server of the module docstring; ``async with`` runs it.

    A shell over the core of ``harness serve`` (:class:`harness.serve.ServerShell`): the listener,
    request ids, the access log (``harness.testing.logprob.access``) and admission are the real
    server's; ``max_in_flight`` and ``queue_limit`` bound the completion requests (none by
    default), beyond which a request gets 429 with ``Retry-After: busy_retry_after``. Its key is
    checked OpenAI's way (401 ``Incorrect API key provided``, the sent key quoted, as a careless
    server does), not the System One way.
    """

    access_log = logging.getLogger("harness.testing.logprob.access")

    def __init__(
        self,
        model: BigramModel | None = None,
        *,
        port: int = 0,
        model_name: str = "bigram-test",
        logprobs: bool = True,
        api_key: str | None = None,
        fail_with: int | None = None,
        max_prompts: int = 64,
        max_in_flight: int | None = None,
        queue_limit: int = 0,
        busy_retry_after: int = 1,
    ) -> None:
        super().__init__(
            port=port, max_in_flight=max_in_flight, queue_limit=queue_limit, api_key=api_key
        )
        self.model = model if model is not None else BigramModel()
        self.model_name = model_name
        self.logprobs = logprobs
        self.fail_with = fail_with
        self.max_prompts = max_prompts
        self.busy_retry_after = busy_retry_after
        self.calls = 0
        self.prompts = 0
        self._ids = itertools.count(1)

    def application(self) -> web.Application:
        """The core's application (no codec routes) with the OpenAI routes."""
        core = self._core
        app = core.application(
            None, new_id=lambda _: f"lp-{next(self._ids)}", authenticate_all=False
        )
        app.router.add_post(
            "/v1/chat/completions", core.admitted(self._chat, self.busy_retry_after)
        )
        app.router.add_post(
            "/v1/completions", core.admitted(self._completions, self.busy_retry_after)
        )
        app.router.add_get("/v1/models", self._models)
        return app

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[Self]:
        """Run the server on its own event loop in a background thread (for synchronous code
        and for tests that run their own loops); stopped on exit."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        thread = threading.Thread(target=run, name="logprob-server", daemon=True)
        thread.start()
        if not ready.wait(30):
            raise RuntimeError("the logprob test server did not start within 30 s")
        try:
            yield self
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {"object": "list", "data": [{"id": self.model_name, "object": "model"}]}
        )

    async def _read(self, request: web.Request) -> dict[str, object] | web.Response:
        if self.api_key is not None:
            sent = request.headers.get("Authorization", "")
            if sent != f"Bearer {self.api_key}":
                return _error(401, f"Incorrect API key provided: {sent[7:]!s}")
        raw = await request.read()
        if self.fail_with is not None:
            return _error(self.fail_with, "cannot serve this request: " + raw.decode("utf-8"))
        try:
            body = load_json(raw)
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        self.calls += 1
        return body

    def _entry(self, token: int, logprob: float) -> dict[str, object]:
        return {
            "token": self.model.piece(token),
            "logprob": logprob,
            "bytes": list(self.model.token_bytes(token)),
        }

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        if isinstance(body, web.Response):
            return body
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "messages must be a non-empty list")
        try:
            maximum = _int(body, "max_completion_tokens", 16, low=1, high=256)
            maximum = _int(body, "max_tokens", maximum, low=1, high=256)
            top = _int(body, "top_logprobs", 0, low=0, high=20)
        except _BadRequest as error:
            return _error(400, str(error))
        wanted = body.get("logprobs") is True and self.logprobs
        context = self.model.encode(bigram_chat_text(messages))
        prompt_tokens = len(context)
        content: list[dict[str, object]] = []
        generated: list[int] = []
        for _ in range(maximum):
            ranked = self.model.top(context, max(top, 1))
            token, logprob = ranked[0]
            item = self._entry(token, logprob)
            item["top_logprobs"] = [self._entry(t, lp) for t, lp in ranked[:top]]
            content.append(item)
            generated.append(token)
            context = [*context, token]
            if self.model.token_bytes(token) == b"\n":
                break
        text = b"".join(self.model.token_bytes(t) for t in generated).decode(
            "utf-8", errors="replace"
        )
        self.prompts += 1
        choice: dict[str, object] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "logprobs": {"content": content} if wanted else None,
            "finish_reason": "length",
        }
        return self._reply("chat.completion", [choice], prompt_tokens, len(generated))

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        if isinstance(body, web.Response):
            return body
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if not isinstance(prompts, list) or not prompts:
            return _error(400, "prompt must be a string or a non-empty list of strings")
        if not all(isinstance(p, str) and p for p in prompts):
            return _error(400, "every prompt must be a non-empty string")
        if len(prompts) > self.max_prompts:
            return _error(400, f"at most {self.max_prompts} prompts a request")
        try:
            maximum = _int(body, "max_tokens", 16, low=0, high=256)
            top = _int(body, "logprobs", 0, low=0, high=5) if body.get("logprobs") else 0
        except _BadRequest as error:
            return _error(400, str(error))
        wanted = body.get("logprobs") is not None and self.logprobs
        echo = body.get("echo") is True
        choices: list[dict[str, object]] = []
        used = 0
        generated_count = 0
        for index, text in enumerate(prompts):
            assert isinstance(text, str)
            ids = self.model.encode(text)
            used += len(ids)
            tokens: list[str] = []
            logprobs: list[float | None] = []
            tops: list[dict[str, float] | None] = []
            offsets: list[int] = []
            offset = 0
            shown = ""
            for i, token in enumerate(ids):
                piece = self.model.piece(token)
                if echo:
                    tokens.append(piece)
                    logprobs.append(None if i == 0 else self.model.logprob(ids[i - 1 : i], token))
                    tops.append(None if i == 0 else self._tops(ids[i - 1 : i], top))
                    offsets.append(offset)
                    shown += piece
                offset += len(piece)
            context = list(ids)
            out = ""
            for _ in range(maximum):
                token, logprob = self.model.top(context, 1)[0]
                piece = self.model.piece(token)
                tokens.append(piece)
                logprobs.append(logprob)
                tops.append(self._tops(context, top))
                offsets.append(offset)
                offset += len(piece)
                out += piece
                context.append(token)
                generated_count += 1
            self.prompts += 1
            choices.append(
                {
                    "index": index,
                    "text": (shown if echo else "") + out,
                    "logprobs": {
                        "tokens": tokens,
                        "token_logprobs": logprobs,
                        "top_logprobs": tops if top else None,
                        "text_offset": offsets,
                    }
                    if wanted
                    else None,
                    "finish_reason": "length",
                }
            )
        return self._reply("text_completion", choices, used, generated_count)

    def _reply(
        self,
        kind: Literal["chat.completion", "text_completion"],
        choices: list[dict[str, object]],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> web.Response:
        """A completion reply in OpenAI's envelope (its id numbered by :attr:`calls`)."""
        prefix = "chatcmpl" if kind == "chat.completion" else "cmpl"
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return web.json_response(
            {
                "id": f"{prefix}-{self.calls}",
                "object": kind,
                "created": int(time.time()),
                "model": self.model_name,
                "choices": choices,
                "usage": usage,
            }
        )

    def _tops(self, context: Sequence[int], k: int) -> dict[str, float] | None:
        if k == 0:
            return None
        found: dict[str, float] = {}
        for token, logprob in self.model.top(context, k):
            piece = self.model.piece(token)
            found.setdefault(piece, logprob)
        return found


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": None}},
        status=status,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.testing.logprob_server [--port N]``: serve until interrupted."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m harness.testing.logprob_server",
        description="An OpenAI-compatible server on 127.0.0.1 whose logprobs come from a small "
        "bigram model (for tests and examples).",
    )
    parser.add_argument("--port", type=int, default=8799, help="port (default 8799)")
    args = parser.parse_args(argv)

    async def serve() -> None:
        async with LogprobServer(port=args.port) as server:
            print(f"logprob test server on {server.root} (model {server.model_name})", flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    return 0
