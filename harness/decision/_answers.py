"""The answers to the questions, and the reference definitions of confidence."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Literal, TypeAlias

import attrs

from ._frozen_map import FrozenMap

__all__ = [
    "Answer",
    "ChoiceAnswer",
    "NoulAnswer",
    "RefusedAnswer",
    "ScoreAnswer",
    "choice_confidence",
    "expected_level_answer",
    "most_probable_answer",
    "score_confidence",
    "trusted_choice",
    "trusted_noul",
    "trusted_score",
]


def check_probability(what: str, value: object) -> float:
    """``value`` as a float when it is a number in [0, 1]; ``ValueError`` naming ``what`` if not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number in [0, 1], not {type(value).__name__}")
    if not 0 <= value <= 1:  # NaN fails both comparisons
        raise ValueError(f"{what} must be a probability in [0, 1] (not NaN), got {value!r}")
    return float(value)


def choice_confidence(probabilities: Mapping[str, float] | Sequence[float]) -> float:
    """The reference confidence of a choice: ``(m - 1/n) / (1 - 1/n)``.

    ``m`` is the top probability of ``n`` options; 1 when there is one option. The result is
    clamped to [0, 1] (a distribution that does not sum to 1 could fall outside).

    >>> choice_confidence({"a": 0.5, "b": 0.5})
    0.0
    >>> round(choice_confidence([0.8, 0.1, 0.1]), 6)
    0.7
    """
    values = (
        list(probabilities.values()) if isinstance(probabilities, Mapping) else list(probabilities)
    )
    count = len(values)
    if count == 0:
        raise ValueError("the confidence of a choice needs at least one probability")
    if count == 1:
        return 1.0
    uniform = 1 / count
    return min(1.0, max(0.0, (max(values) - uniform) / (1 - uniform)))


def score_confidence(probabilities: Sequence[float]) -> float:
    """The reference confidence of a score: ``max(0, 1 - sum p_i |i - k| / D)``.

    ``k`` is the most probable level (the first when tied) and ``D`` the same spread under a
    uniform distribution, ``sum |i - (n-1)/2| / n``; 1 when there is one level.

    >>> score_confidence([0.0, 1.0, 0.0])
    1.0
    >>> score_confidence([1/3, 1/3, 1/3]) < 0.01
    True
    """
    values = list(probabilities)
    count = len(values)
    if count == 0:
        raise ValueError("the confidence of a score needs at least one probability")
    if count == 1:
        return 1.0
    mode = max(range(count), key=values.__getitem__)
    spread = sum(p * abs(i - mode) for i, p in enumerate(values))
    uniform = sum(abs(i - (count - 1) / 2) for i in range(count)) / count
    return min(1.0, max(0.0, 1 - spread / uniform))


def _probabilities(value: Mapping[str, float]) -> FrozenMap[str, float]:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict skips the ABC
        raise ValueError(f"choice probabilities must be a mapping, not {type(value).__name__}")
    if not value:
        raise ValueError("a choice answer needs a probability for at least one option")
    pairs: list[tuple[str, float]] = []
    for option, probability in value.items():
        if not isinstance(option, str):
            raise ValueError(f"choice options must be str, not {type(option).__name__}")
        if type(probability) is not float or not 0.0 <= probability <= 1.0:  # else as it is
            probability = check_probability(f"the probability of option {option!r}", probability)
        pairs.append((option, probability))
    return FrozenMap(pairs)


def _is_sequence(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _probability_list(value: Sequence[float]) -> tuple[float, ...]:
    if not _is_sequence(value):
        raise ValueError(f"score probabilities must be a sequence, not {type(value).__name__}")
    return tuple(
        p
        if type(p) is float and 0.0 <= p <= 1.0  # a probability as it is; else checked, named
        else check_probability(f"the probability of level {i}", p)
        for i, p in enumerate(value)
    )


def _level_names(value: Sequence[str]) -> tuple[str, ...]:
    if not _is_sequence(value):
        raise ValueError(f"score levels must be a sequence of str, not {type(value).__name__}")
    levels = tuple(value)
    for index, level in enumerate(levels):
        if not isinstance(level, str):
            raise ValueError(f"score level {index} must be a str, not {type(level).__name__}")
    return levels


def _finite_number(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"score must be a number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError("score must be a finite number, not NaN or infinity")
    return float(value)


def _as_probability(value: float) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    return check_probability("a noul probability", value)


def _confidence(value: float) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    return check_probability("confidence", value)


@attrs.frozen
class ChoiceAnswer:
    """The answer to a :class:`Choice`: the chosen option, a probability per option, confidence.

    ``probabilities`` keep the question's option order; ``choice`` is one of its keys.

    >>> answer = ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, confidence=0.5)
    >>> answer.probabilities["tech"]
    0.75
    """

    kind: ClassVar[Literal["choice"]] = "choice"
    choice: str
    probabilities: Mapping[str, float] = attrs.field(converter=_probabilities)
    confidence: float = attrs.field(converter=_confidence)

    def __attrs_post_init__(self) -> None:
        if self.choice not in self.probabilities:
            raise ValueError(
                f"the chosen option {self.choice!r} must be one of the options with a "
                f"probability: {', '.join(map(repr, self.probabilities))}"
            )


@attrs.frozen
class NoulAnswer:
    """The answer to a :class:`Noul`: the probability that it is true.

    >>> NoulAnswer(0.9).probability
    0.9
    """

    kind: ClassVar[Literal["noul"]] = "noul"
    probability: float = attrs.field(converter=_as_probability)


@attrs.frozen
class ScoreAnswer:
    """The answer to a :class:`Score`: the expected level, the levels, their probabilities.

    ``score`` is a position on the scale, in [0, number of levels - 1] (the expectation
    ``sum i * p_i`` on a conformant server); ``probabilities`` follow ``levels``, lowest first.

    >>> ScoreAnswer(1.5, ("low", "mid", "high"), (0.0, 0.5, 0.5), confidence=0.25).score
    1.5
    """

    kind: ClassVar[Literal["score"]] = "score"
    score: float = attrs.field(converter=_finite_number)
    levels: tuple[str, ...] = attrs.field(converter=_level_names)
    probabilities: tuple[float, ...] = attrs.field(converter=_probability_list)
    confidence: float = attrs.field(converter=_confidence)

    def __attrs_post_init__(self) -> None:
        if len(self.levels) != len(self.probabilities):
            raise ValueError(
                f"a score answer needs one probability per level: {len(self.levels)} levels, "
                f"{len(self.probabilities)} probabilities"
            )
        if not self.levels:
            raise ValueError("a score answer needs at least one level")
        top = len(self.levels) - 1
        if not 0 <= self.score <= top:
            raise ValueError(f"score must be a level position in [0, {top}], got {self.score!r}")


@attrs.frozen
class RefusedAnswer:
    """A question the model declined to answer (OpenAI Decisions' per-question ``refusal``).

    >>> RefusedAnswer("policy").reason
    'policy'
    """

    kind: ClassVar[Literal["refused"]] = "refused"
    reason: str | None = None


Answer: TypeAlias = ChoiceAnswer | NoulAnswer | ScoreAnswer | RefusedAnswer
"""Any answer: one per question, or a refusal."""

# Trusted constructors: the same objects the public constructors make, without their checks,
# for values a caller has just checked itself (a wire codec reading a reply, the calibration's
# maps). They are not public: a caller outside ``harness.decision`` takes them from
# ``harness.decision._internal`` and owes what each one's docstring says.
# ``tests/decision/test_trusted_answers.py`` holds each one equal to its public constructor.

_new = object.__new__


def slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The setter of slot ``name`` that ``cls`` itself declares (attrs makes a frozen class's
    fields slots): it sets the value as the class's ``__init__`` does, without the name's lookup
    through the class's bases that ``object.__setattr__`` makes each time."""
    setter: Callable[[object, object], None] = cls.__dict__[name].__set__
    return setter


_CHOICE = slot_setter(ChoiceAnswer, "choice")
_CHOICE_PROBABILITIES = slot_setter(ChoiceAnswer, "probabilities")
_CHOICE_CONFIDENCE = slot_setter(ChoiceAnswer, "confidence")
_NOUL_PROBABILITY = slot_setter(NoulAnswer, "probability")
_SCORE = slot_setter(ScoreAnswer, "score")
_SCORE_LEVELS = slot_setter(ScoreAnswer, "levels")
_SCORE_PROBABILITIES = slot_setter(ScoreAnswer, "probabilities")
_SCORE_CONFIDENCE = slot_setter(ScoreAnswer, "confidence")


def most_probable_answer(probabilities: Mapping[str, float]) -> ChoiceAnswer:
    """The answer a model's distribution over a choice's options makes (one probability per
    option, in option order): its first most probable option, at the reference confidence."""
    top = max(probabilities, key=probabilities.__getitem__)
    return ChoiceAnswer(top, probabilities, choice_confidence(list(probabilities.values())))


def expected_level_answer(levels: Sequence[str], probabilities: Sequence[float]) -> ScoreAnswer:
    """The answer a model's distribution over a score's levels makes (one probability per level,
    lowest first): the expected level, kept on the scale against rounding, at the reference
    confidence."""
    shares = tuple(probabilities)
    expected = math.fsum(i * p for i, p in enumerate(shares))
    score = min(float(len(shares) - 1), max(0.0, expected))
    return ScoreAnswer(score, tuple(levels), shares, score_confidence(shares))


def trusted_choice(choice: str, probabilities: dict[str, float], confidence: float) -> ChoiceAnswer:
    """A :class:`ChoiceAnswer` made without checks. The caller owes: ``probabilities`` a dict
    of ``str`` options to ``float`` values in [0, 1] (at least one), made for this answer and
    never changed after (it is kept, not copied); ``choice`` one of its keys; ``confidence`` a
    ``float`` in [0, 1]."""
    answer: ChoiceAnswer = _new(ChoiceAnswer)
    table: FrozenMap[str, float] = _new(FrozenMap)  # FrozenMap.adopt(probabilities), inlined
    table._lookup = probabilities
    _CHOICE(answer, choice)
    _CHOICE_PROBABILITIES(answer, table)
    _CHOICE_CONFIDENCE(answer, confidence)
    return answer


def trusted_noul(probability: float) -> NoulAnswer:
    """A :class:`NoulAnswer` made without checks: ``probability`` a ``float`` in [0, 1]."""
    answer: NoulAnswer = _new(NoulAnswer)
    _NOUL_PROBABILITY(answer, probability)
    return answer


def trusted_score(
    score: float, levels: tuple[str, ...], probabilities: tuple[float, ...], confidence: float
) -> ScoreAnswer:
    """A :class:`ScoreAnswer` made without checks. The caller owes: ``levels`` a non-empty
    tuple of ``str``; ``probabilities`` a tuple of as many ``float`` values in [0, 1];
    ``score`` a finite ``float`` in [0, len(levels) - 1]; ``confidence`` a ``float`` in
    [0, 1]."""
    answer: ScoreAnswer = _new(ScoreAnswer)
    _SCORE(answer, score)
    _SCORE_LEVELS(answer, levels)
    _SCORE_PROBABILITIES(answer, probabilities)
    _SCORE_CONFIDENCE(answer, confidence)
    return answer
