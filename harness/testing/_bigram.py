"""A small deterministic language model whose token log-probabilities a test can compute.

:class:`BigramModel` is an interpolated bigram model over the project's tokenizer
(``cl100k_base``) trained on a text, so the log-probability of any token after any context is a
closed formula. One concern: the model and the prompt it continues for chat messages; the
OpenAI-compatible server that serves it is ``_logprob_server.py``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from typing import Final

import attrs

from harness.catalog import Tokenizer, tokenizer

__all__ = ["TRAINING_TEXT", "BigramModel", "bigram_chat_text"]

TRAINING_TEXT: Final = """\
<|user|> Which team handles the invoice? Options: A. billing B. tech. Answer with the letter.
<|assistant|> A
<|user|> Is the printer broken? Answer yes or no.
<|assistant|> yes
<|assistant|> B
<|assistant|> C
<|assistant|> no
<|assistant|> A
<|assistant|> D
<|assistant|> yes
<|assistant|> E
<|assistant|> no
<|assistant|> F
<|assistant|> G
<|assistant|> H
<|assistant|> b
<|assistant|>B
The ticket asks for a refund of the invoice. The customer is angry and the printer is broken.
Question: Which team handles the ticket?
Answer: billing
Answer: tech
Answer: yes
Answer: no
Answer: 1
Answer: 0
Answer: 2
Answer: billing dispute
The answer is yes. The answer is no. The note is urgent. The note can wait.
"""
"""The text the default model is trained on: labels after ``<|assistant|>`` and answers after
``Answer:``, so both providers find mass on their labels and options."""


@attrs.frozen(eq=False)
class BigramModel:
    """An interpolated bigram model over a tiktoken encoding, trained on ``text``.

    ``P(t | p) = weight * c(p, t) / c(p) + (1 - weight) * U(t)`` when ``p`` was seen, else
    ``U(t)``, with the smoothed unigram ``U(t) = (c(t) + alpha) / (N + alpha * V)`` over the whole
    vocabulary (``V`` ids): every token has a probability, and the probabilities after any
    context sum to 1. Only the last token of the context matters.
    """

    text: str = TRAINING_TEXT
    encoding: str = "cl100k_base"
    weight: float = 0.9
    alpha: float = 1e-4
    _tokenizer: Tokenizer = attrs.field(init=False, repr=False)
    _unigrams: Counter[int] = attrs.field(init=False, repr=False)
    _bigrams: dict[int, Counter[int]] = attrs.field(init=False, repr=False)
    _total: int = attrs.field(init=False, repr=False)
    _totals: dict[int, int] = attrs.field(init=False, repr=False)
    _rankings: dict[int | None, list[int]] = attrs.field(init=False, repr=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        tokens = tokenizer(self.encoding)
        ids = tokens.encode(self.text)
        bigrams: dict[int, Counter[int]] = {}
        for previous, token in itertools.pairwise(ids):
            bigrams.setdefault(previous, Counter())[token] += 1
        object.__setattr__(self, "_tokenizer", tokens)
        object.__setattr__(self, "_unigrams", Counter(ids))
        object.__setattr__(self, "_bigrams", bigrams)
        object.__setattr__(self, "_total", len(ids))
        object.__setattr__(self, "_totals", {p: c.total() for p, c in bigrams.items()})

    @property
    def vocabulary_size(self) -> int:
        """How many token ids the model spreads its probability over."""
        return self._tokenizer.vocabulary_size

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        return self._tokenizer.encode(text)

    def token_bytes(self, token: int) -> bytes:
        """The bytes of token ``token``."""
        return self._tokenizer.token_bytes(token)

    def piece(self, token: int) -> str:
        """The text of token ``token`` (a cut character replaced, as servers show it)."""
        return self.token_bytes(token).decode("utf-8", errors="replace")

    def _unigram(self, token: int) -> float:
        size = self.vocabulary_size
        return (self._unigrams.get(token, 0) + self.alpha) / (self._total + self.alpha * size)

    def probability(self, context: Sequence[int], token: int) -> float:
        """``P(token | context)``."""
        follows = self._bigrams.get(context[-1]) if context else None
        if not follows:
            return self._unigram(token)
        seen = self._totals[context[-1]]
        return self.weight * follows.get(token, 0) / seen + (1 - self.weight) * self._unigram(token)

    def logprob(self, context: Sequence[int], token: int) -> float:
        """``log P(token | context)`` (natural log)."""
        return math.log(self.probability(context, token))

    def top(self, context: Sequence[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` most probable next tokens with their log-probabilities, ties by id."""
        last = context[-1] if context else None
        ranking = self._rankings.get(last)
        if ranking is None:  # the order depends on the last token alone: made once per token
            ranking = sorted(self._unigrams, key=lambda t: (-self.probability(context, t), t))
            self._rankings[last] = ranking
        seen = self._unigrams
        ranked = ranking[:k]
        unseen = 0
        while len(ranked) < k:  # every unseen token has the same (least) probability
            if unseen not in seen:
                ranked.append(unseen)
            unseen += 1
        return [(t, self.logprob(context, t)) for t in ranked]

    def sequence_logprob(self, text: str) -> float:
        """``log P`` of the tokens of ``text`` after its first (the first is given)."""
        ids = self.encode(text)
        return sum(self.logprob(ids[i - 1 : i], ids[i]) for i in range(1, len(ids)))


def bigram_chat_text(messages: Sequence[object]) -> str:
    """The text the server's model continues for ``messages``: each message rendered
    ``"<|{role}|> {content}\\n"``, then ``"<|assistant|>"``."""
    lines = []
    for message in messages:
        if isinstance(message, dict):
            lines.append(f"<|{message.get('role', 'user')}|> {message.get('content', '')}\n")
    return "".join(lines) + "<|assistant|>"
