"""The question schemes: what a turn repeats of the state, and what the record says of it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.catalog import Tokenizer, tokenizer
from harness.decision import Choice, DecisionRequest, Noul, systemone
from harness.providers import FakeDecisionModel
from harness.thinker import (
    OBS_QUESTION_SCHEME,
    QUESTION_SCHEME_VERSIONS,
    DecisionThinker,
    ThinkerRun,
)
from harness.thinker._scheme import LABEL_WORDS, build_request, check_scheme, label
from harness.tools import Identifiable, Workflow

from .notes import JudgeNote, Note, SplitNote, Triage, Verdict, triage_policy
from .test_decision_thinker import INPUT, dispatcher_for


class VerboseTriage(Triage):
    question_scheme = "verbose"


async def run(thinker: DecisionThinker[Note, Verdict]) -> tuple[FakeDecisionModel, ThinkerRun]:  # type: ignore[type-arg]  # the run's answer type is the thinker's
    model = FakeDecisionModel(triage_policy)
    async with dispatcher_for(model) as dispatcher:
        job = ThinkerRun(Workflow(), thinker, Note(INPUT))
        await dispatcher.run(job)
    return model, job


def lines_of(request: DecisionRequest) -> list[str]:
    assert isinstance(request.state, dict)
    lines = request.state["artifacts"]
    assert isinstance(lines, list)
    return [str(line) for line in lines]


async def test_the_lean_scheme_says_each_digest_line_once_and_asks_what_the_seed_asks() -> None:
    lean_model, lean_job = await run(Triage(Workflow()))
    verbose_model, verbose_job = await run(VerboseTriage(Workflow()))

    assert lean_job.metadata[OBS_QUESTION_SCHEME] == QUESTION_SCHEME_VERSIONS["lean"] == "lean-1"
    assert verbose_job.metadata[OBS_QUESTION_SCHEME] == "verbose-0"
    # Same moves, same ids, same state: only what the questions repeat differs.
    assert len(lean_model.requests) == len(verbose_model.requests) == 4
    for lean, verbose in zip(lean_model.requests, verbose_model.requests, strict=True):
        assert list(lean.questions) == list(verbose.questions)
        assert lean.state == verbose.state
        lean_body = systemone.encode_body(lean, "m").decode()
        verbose_body = systemone.encode_body(verbose, "m").decode()
        for line in lines_of(lean):
            assert lean_body.count(json.dumps(line, ensure_ascii=False)[1:-1]) == 1
        assert len(lean_body) < len(verbose_body)

    second = lean_model.requests[1]
    judge = second.questions["judge_note_input"]
    assert isinstance(judge, Choice)
    assert list(judge.options) == ["note#1", "note#2", "note#3"]  # refs, in world order
    assert judge.options["note#2"] == '{"text":"alpha is due"}'  # a few words of the digest
    assert judge.instructions == "If judge_note runs, which artifact should it take?"
    last = lean_model.requests[-1]
    select = last.questions["select_verdict#1"]
    assert isinstance(select, Noul)
    assert select.instructions == "Does verdict#1 belong in the answer to the objective?"
    assert select.when_true == "verdict#1 belongs in the answer"
    assert "alpha" not in select.instructions  # its words are in the state, once

    verbose_last = verbose_model.requests[-1].questions["select_verdict#1"]
    assert isinstance(verbose_last, Noul)
    assert "alpha is due" in verbose_last.instructions
    verbose_judge = verbose_model.requests[1].questions["judge_note_input"]
    assert isinstance(verbose_judge, Choice)
    assert verbose_judge.options["note#2"] == 'note#2 (note): {"text":"alpha is due"}'


def test_the_scheme_is_a_constructor_option_checked_at_construction() -> None:
    class Picked(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable, scheme: str) -> None:
            super().__init__(
                parent,
                output_type=Verdict,
                key_tool=JudgeNote,
                palette=(SplitNote,),
                objective="Keep what matters",
                question_scheme=scheme,  # type: ignore[arg-type]  # a wrong value on purpose
            )

    assert Picked(Workflow(), "verbose").scheme == "verbose"
    assert Picked(Workflow(), "lean").scheme == "lean"
    assert Triage(Workflow()).scheme == "lean"
    assert VerboseTriage(Workflow()).scheme == "verbose"
    with pytest.raises(
        ValueError, match=r"question_scheme must be one of 'lean', 'verbose', 'shared', not 'terse'"
    ):
        Picked(Workflow(), "terse")


class SharedTriage(Triage):
    question_scheme = "shared"


async def test_the_shared_scheme_asks_one_input_question_for_tools_with_the_same_refs() -> None:
    lean_model, _ = await run(Triage(Workflow()))
    thinker = SharedTriage(Workflow())
    model, job = await run(thinker)

    assert job.metadata[OBS_QUESTION_SCHEME] == "shared-1"
    assert [t.tool for t in thinker.turns()] == ["split_note", "judge_note", "judge_note", "finish"]
    first = model.requests[0]
    # Turn 1: both tools could take only note#1, so one question asks for both.
    assert list(first.questions) == ["next", "split_note_input"]
    shared = first.questions["split_note_input"]
    assert isinstance(shared, Choice)
    assert shared.instructions == "If split_note or judge_note runs, which artifact should it take?"
    assert list(shared.options) == ["note#1"]
    # Turn 2: their refs differ, so each has its own question, as in the lean scheme.
    assert list(model.requests[1].questions) == list(lean_model.requests[1].questions)
    assert model.requests[1] == lean_model.requests[1]
    assert thinker.turns()[1].argument == {"note#1": 0.05, "note#2": 0.9, "note#3": 0.05}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("alpha is due", "alpha is due"),
        ("one two three four five", "one two three four five"),
        ("one two three four five six", "one two three four five ..."),
        ("  spaced\tout \n words ", "spaced out words"),
        ("", None),
    ],
)
def test_an_option_label_is_at_most_a_few_words(words: str, expected: str | None) -> None:
    assert LABEL_WORDS == 5
    assert label(words) == expected


_WORDS = st.text(
    st.sampled_from(list("abcxyzABC 0123456789.,;:'\"\\/-_#()[]{}é日🎉\n\t")), max_size=40
)


@given(
    items=st.lists(st.tuples(st.sampled_from(["note", "doc", "list", "a_b"]), _WORDS), min_size=1),
    tools=st.lists(
        st.tuples(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), _WORDS),
        max_size=4,
        unique_by=lambda tool: tool[0],
    ),
    done=st.lists(_WORDS, max_size=3),
    scheme=st.sampled_from(["lean", "verbose", "shared"]),
    data=st.data(),
)
def test_a_turns_body_is_counted_exactly_from_cached_segments(
    items: list[tuple[str, str]],
    tools: list[tuple[str, str]],
    done: list[str],
    scheme: str,
    data: st.DataObject,
) -> None:
    # Random worlds put through the scheme, then counted twice: through the shared segment
    # cache (warm from earlier examples, as in a run) and whole. They must agree exactly.
    refs = [f"{alias}#{i + 1}" for i, (alias, _) in enumerate(items)]
    words = {ref: text for ref, (_, text) in zip(refs, items, strict=True)}
    line = {
        ref: f"{ref} ({alias}): {words[ref]}" for ref, (alias, _) in zip(refs, items, strict=True)
    }
    moves = [
        (name, description, data.draw(st.lists(st.sampled_from(refs), min_size=1, unique=True)))
        for name, description in tools
        if name != "finish"
    ]
    candidates = data.draw(st.lists(st.sampled_from(refs), unique=True))
    if not moves and not candidates:
        candidates = refs[:1]
    request = build_request(
        check_scheme(scheme),
        objective="Keep what matters",
        lines=[line[ref] for ref in refs],
        words=words,
        line=line,
        done=done,
        moves=moves,
        candidates=candidates,
    )
    body = systemone.encode_body(request, "sparrow-decider")
    for name in ("cl100k_base", "o200k_base"):
        shared = tokenizer(name)
        assert shared.count(body) == shared.count_uncached(body)
        cold = Tokenizer(name, shared._encoding)  # the same encoding, an empty count cache
        assert cold.count(body) == shared.count_uncached(body)
