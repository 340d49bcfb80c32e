"""The prompts of the ``llama`` provider: pure functions of (state text, question, examples).

A prompt is what the model reads before its answer, as :class:`Segment` pieces (plain text, or a
chat template's markup read as special tokens), with each option's continuation and the closing
delimiter after it. Two formats, named by the entry's ``prompt_format``:

``base`` (a completion prompt, for any model, base or instruct)::

    Answer each question about the state with one of its options.

    State:
    <a solved example's state>
    Question: <its question>
    Options:
    - yes: <when true>
    - no: <when false>
    Answer yes or no.
    Answer: yes

    State:
    <the state>
    Question: ...
    Answer:

and each option is scored as the continuation ``" <option>"`` then ``"\\n"``.

``chat`` (the GGUF's own chat template): each solved example a user turn (its state and question)
and an assistant turn (its answer), then the state and question as the last user turn; the option
is scored as the assistant's whole reply, closed by the template's end of turn.

The state comes before the question in every format, so the questions of one request share the
state's tokens (the engine evaluates them once); the examples come first, one set per question
role (``harness.catalog.role_of``).

Options are named by ``choice_options``: ``labels`` scores a choice's option keys (short, one or
two tokens each: cheap, and every option's text is compared on the same footing, but the model
must link the key to its description in the list), ``texts`` scores each option's description
(the key when it has none): the meaning itself, for a model that does not follow a list of labels,
at the price of more tokens and a bias against long texts (a summed log-likelihood falls with
every token). A noul's options are ``yes`` / ``no``, a score's its level numbers in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import attrs

from harness.catalog import SolvedExample
from harness.decision import Choice, Noul, Question, Score

__all__ = [
    "INSTRUCTIONS",
    "ChatTemplate",
    "ChoiceOptions",
    "Prompt",
    "PromptFormat",
    "Segment",
    "base_prompt",
    "chat_prompt",
    "option_names",
]

# same shape as evals/_examples.py's Method and Metric: other Literal types
PromptFormat = Literal["base", "chat"]
ChoiceOptions = Literal["labels", "texts"]

INSTRUCTIONS: Final = "Answer each question about the state with one of its options."
"""The first line of a ``base`` prompt (and of a ``chat`` prompt's first user turn)."""
_NEWLINE: Final = "\n"


@attrs.frozen
class Segment:
    """A piece of a prompt; ``special``: a chat template's markup, tokenized with its special
    tokens (a state's or a question's text never is)."""

    text: str
    special: bool = False


@attrs.frozen
class Prompt:
    """A question's prompt, its options' continuations (in the question's option order) and the
    delimiter that closes an option."""

    segments: tuple[Segment, ...]
    options: tuple[str, ...]
    closing: Segment

    @property
    def text(self) -> str:
        """The prompt as one text (what the record shows)."""
        return "".join(segment.text for segment in self.segments)


@attrs.frozen
class ChatTemplate:
    """A chat template cut at its messages: ``opening`` before the first user message,
    ``to_reply`` between a user message and the assistant's reply, ``to_user`` between a reply
    and the next user message, and ``closing``, what ends a reply (the start of ``to_user``)."""

    opening: str
    to_reply: str
    to_user: str
    closing: str


def option_names(question: Question, choice_options: ChoiceOptions = "labels") -> tuple[str, ...]:
    """What each option is called in the prompt and scored as, in the question's order."""
    if isinstance(question, Choice):
        if choice_options == "texts":
            return tuple(
                (description or key).strip() or key for key, description in question.options.items()
            )
        return tuple(question.options)
    if isinstance(question, Noul):
        return ("yes", "no")
    assert isinstance(question, Score)
    return tuple(str(i) for i in range(len(question.levels)))


def _listing(question: Question, order: Sequence[int], choice_options: ChoiceOptions) -> list[str]:
    """The question, its options listed in ``order`` (a noul's only when described) and how to
    answer."""
    if isinstance(question, Noul) and not (question.when_true or question.when_false):
        return [f"Question: {question.instructions}", "Answer yes or no."]
    lines = [f"Question: {question.instructions}", "Options:"]
    names = option_names(question, choice_options)
    if isinstance(question, Choice):
        descriptions: tuple[str | None, ...] = tuple(question.options.values())
        if choice_options == "texts":
            descriptions = (None,) * len(names)
        how = "Answer with one option."
    elif isinstance(question, Noul):
        descriptions = (question.when_true, question.when_false)
        how = "Answer yes or no."
    else:
        descriptions = tuple(question.levels)
        how = "Answer with the level's number."
    for index in order:
        description = descriptions[index]
        lines.append(f"- {names[index]}: {description}" if description else f"- {names[index]}")
    lines.append(how)
    return lines


def _solved_name(example: SolvedExample, choice_options: ChoiceOptions) -> str:
    """The name of an example's answer among its question's options."""
    question = example.question
    names = option_names(question, choice_options)
    if isinstance(question, Choice):
        keys = list(question.options)
        if example.answer in keys:
            return names[keys.index(example.answer)]
    elif isinstance(question, Score) and example.answer in question.levels:
        return str(question.levels.index(example.answer))
    if example.answer in names:
        return example.answer
    raise ValueError(
        f"solved example answers {example.answer!r}, which is not an option of its question "
        f"({', '.join(names)})"
    )


def _order(count: int, order: Sequence[int] | None) -> Sequence[int]:
    return range(count) if order is None else order


def _user_text(state: str, question: Question, order: Sequence[int], how: ChoiceOptions) -> str:
    return _NEWLINE.join(["State:", state, *_listing(question, order, how)])


def base_prompt(
    state: str,
    question: Question,
    examples: Sequence[SolvedExample] = (),
    *,
    choice_options: ChoiceOptions = "labels",
    order: Sequence[int] | None = None,
) -> Prompt:
    """The ``base`` prompt of ``question`` about ``state``, after the solved ``examples``, its
    options listed in ``order`` (default: the question's)."""
    blocks = [INSTRUCTIONS]
    for example in examples:
        ex_order = range(len(option_names(example.question, choice_options)))
        answer = _solved_name(example, choice_options)
        blocks.append(
            _user_text(example.state, example.question, ex_order, choice_options)
            + f"\nAnswer: {answer}"
        )
    names = option_names(question, choice_options)
    blocks.append(
        _user_text(state, question, _order(len(names), order), choice_options) + "\nAnswer:"
    )
    return Prompt(
        segments=(Segment("\n\n".join(blocks)),),
        options=tuple(f" {name}" for name in names),
        closing=Segment(_NEWLINE),
    )


def chat_prompt(
    state: str,
    question: Question,
    examples: Sequence[SolvedExample],
    template: ChatTemplate,
    *,
    choice_options: ChoiceOptions = "labels",
    order: Sequence[int] | None = None,
) -> Prompt:
    """The ``chat`` prompt of ``question``: the examples as turns, then the state and the
    question as the last user turn, the reply opened (``template``: the GGUF's own)."""
    segments: list[Segment] = [Segment(template.opening, special=True)]
    first = True
    for example in examples:
        ex_order = range(len(option_names(example.question, choice_options)))
        text = _user_text(example.state, example.question, ex_order, choice_options)
        if first:
            text, first = f"{INSTRUCTIONS}\n\n{text}", False
        segments += [
            Segment(text),
            Segment(template.to_reply, special=True),
            Segment(_solved_name(example, choice_options)),
            Segment(template.to_user, special=True),
        ]
    names = option_names(question, choice_options)
    text = _user_text(state, question, _order(len(names), order), choice_options)
    if first:
        text = f"{INSTRUCTIONS}\n\n{text}"
    segments += [Segment(text), Segment(template.to_reply, special=True)]
    return Prompt(
        segments=tuple(s for s in segments if s.text),
        options=names,
        closing=Segment(template.closing, special=True),
    )


_MARKS: Final = ("\x01FIRST\x01", "\x01REPLY\x01", "\x01NEXT\x01")


def cut_template(rendered: str) -> ChatTemplate | None:
    """A :class:`ChatTemplate` from a template's rendering of a user message, a reply and a
    second user message (the marks of :data:`_MARKS`), the reply opened; None when the
    rendering does not keep the messages in that order."""
    first, reply, second = _MARKS
    try:
        a = rendered.index(first)
        b = rendered.index(reply, a)
        c = rendered.index(second, b)
    except ValueError:
        return None
    to_user = rendered[b + len(reply) : c]
    closing = to_user.split("\n", 1)[0] or to_user.strip()
    if not closing:
        return None
    return ChatTemplate(
        opening=rendered[:a],
        to_reply=rendered[a + len(first) : b],
        to_user=to_user,
        closing=closing,
    )


def template_messages() -> list[tuple[str, str]]:
    """The messages :func:`cut_template` expects rendered."""
    first, reply, second = _MARKS
    return [("user", first), ("assistant", reply), ("user", second)]
