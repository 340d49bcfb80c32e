"""Hypothesis strategies for the decision vocabulary: requests, answers, JSON values."""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st

from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    JsonValue,
    Noul,
    NoulAnswer,
    Question,
    Score,
    ScoreAnswer,
)

CANARY = "CANARY-7f3a9-never-in-a-message"

texts = st.text(min_size=1, max_size=12).filter(lambda text: bool(text.strip()))
descriptions = st.none() | st.text(max_size=12)
probabilities = st.floats(min_value=0.0, max_value=1.0)

choices = st.builds(Choice, texts, st.dictionaries(texts, descriptions, min_size=1, max_size=5))
nouls = st.builds(Noul, texts, descriptions, descriptions)
scores = st.builds(Score, texts, st.lists(texts, min_size=2, max_size=6))
questions: st.SearchStrategy[Question] = st.one_of(choices, nouls, scores)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
wild_json: st.SearchStrategy[object] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.just(CANARY),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.just(CANARY), inner, max_size=4)
    ),
    max_leaves=16,
)
"""Any decoded JSON value, NaN and infinities included (Python's json module reads them)."""

states: st.SearchStrategy[JsonValue] = st.one_of(
    st.text(max_size=20),
    st.lists(json_values, max_size=4),
    st.dictionaries(st.text(max_size=6), json_values, max_size=4),
)
"""States a System One server accepts: a string, an array or an object."""

requests = st.builds(
    DecisionRequest,
    states,
    st.dictionaries(st.text(min_size=1, max_size=8), questions, min_size=1, max_size=5),
)


@st.composite
def answer_to(draw: st.DrawFn, question: Question) -> Answer:
    """A valid answer to ``question``."""
    if isinstance(question, Noul):
        return NoulAnswer(draw(probabilities))
    if isinstance(question, Choice):
        options = list(question.options)
        values = draw(st.lists(probabilities, min_size=len(options), max_size=len(options)))
        return ChoiceAnswer(
            draw(st.sampled_from(options)),
            dict(zip(options, values, strict=True)),
            draw(probabilities),
        )
    top = len(question.levels) - 1
    values = draw(st.lists(probabilities, min_size=top + 1, max_size=top + 1))
    score = draw(st.floats(min_value=0.0, max_value=float(top)))
    return ScoreAnswer(score, question.levels, values, draw(probabilities))


@st.composite
def answers_to(draw: st.DrawFn, request: DecisionRequest) -> Mapping[str, Answer]:
    """A valid answer to every question of ``request``, in order."""
    return {qid: draw(answer_to(question)) for qid, question in request.questions.items()}
