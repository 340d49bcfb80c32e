"""The request diff a replay miss shows: questions and a choice's options added, dropped and
reordered read the same way, in the order asked."""

from __future__ import annotations

from harness.decision import JsonValue
from harness.replay import request_differences


def body(questions: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {"model": "m", "state": "s", "questions": questions}


def choice(*options: str) -> dict[str, JsonValue]:
    return {"type": "choice", "criteria": {o: f"pick {o}" for o in options}}


def test_questions_new_gone_and_reordered() -> None:
    recorded = body({"a": choice("x"), "b": choice("x"), "c": choice("x")})
    asked = body({"c": choice("x"), "d": choice("x"), "a": choice("x")})
    found = [d.summary() for d in request_differences(recorded, asked)]
    assert found == [
        "question 'd' is new",
        "question 'b' is gone",
        "questions are asked in another order",
    ]
    (order,) = (d for d in request_differences(recorded, asked) if "order" in d.change)
    assert (order.recorded, order.asked) == ("a, c", "c, a")


def test_options_new_gone_described_otherwise_and_reordered() -> None:
    recorded = body({"q": choice("keep", "drop", "move")})
    changed = choice("move", "keep", "add")
    assert isinstance(changed["criteria"], dict)
    changed["criteria"]["keep"] = "keep it"
    found = [d.summary() for d in request_differences(recorded, body({"q": changed}))]
    assert found == [
        "question 'q' option 'add' is new",
        "question 'q' option 'drop' is gone",
        "question 'q' option 'keep' has another description",
        "question 'q' options are offered in another order",
    ]


def test_the_same_body_has_no_difference() -> None:
    same = body({"q": choice("a", "b")})
    assert request_differences(same, same) == []


def test_a_long_side_is_cut_and_its_quote_still_closes() -> None:
    words = 'with "quoted" words ' * 60
    recorded = body({"a": {"type": "choice", "criteria": {"x": words}}})
    asked = body({"a": {"type": "choice", "criteria": {"x": "short"}}})
    (difference,) = request_differences(recorded, asked)
    shown = difference.detail().splitlines()[1].removeprefix("    recorded: ")
    assert len(shown) <= 400
    assert shown.startswith('"with \\"quoted\\" words')
    assert shown.endswith('..."'), shown  # the JSON string closes
    inner = shown[1:-1]
    assert not inner.endswith("\\"), shown  # never a dangling escape
    assert inner.replace('\\"', "").count('"') == 0  # no quote left open inside


def test_a_long_state_line_is_never_cut_inside_a_quote() -> None:
    for pad in range(4):  # wherever the cut falls
        state: JsonValue = "x" * pad + 'say "yes" or "no" ' * 60
        recorded: dict[str, JsonValue] = {"model": "m", "state": state, "questions": {}}
        asked: dict[str, JsonValue] = {"model": "m", "state": "short", "questions": {}}
        (difference,) = request_differences(recorded, asked)
        shown = difference.detail().splitlines()[1].removeprefix("    recorded: ")
        assert len(shown) <= 400
        assert shown.endswith("...")
        assert shown.count('"') % 2 == 0, shown
