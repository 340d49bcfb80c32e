"""The verdicts only a type checker issues: what it cannot decide (``harness-undecidable``).

A computed tool name, an entry that is not one specific class, a palette read from a class
attribute a subclass may override, a thinker whose input is still a type variable: the runtime
validator sees the classes and decides each of these when a thinker is built, so it never
issues them; the mypy plugin words them here, each with the knowing opt-out. The one thing the
runtime cannot see is a thinker's input when nothing binds it (Python erases type arguments):
:func:`unknown_input_verdict` says so, rather than calling the palette legal.
"""

from __future__ import annotations

from harness.palette._types import Verdict
from harness.palette._types import quoted as _q

__all__ = [
    "aliased_name_verdict",
    "call_form_verdict",
    "container_entry_verdict",
    "generic_input_verdict",
    "overridable_entry_verdict",
    "too_many_branches_verdict",
    "undecidable_name_verdict",
    "unknown_entry_verdict",
    "unknown_input_verdict",
    "unread_call_form_verdict",
    "unseen_name_verdict",
]

#: How a user opts out of a check the type checker cannot do, knowingly.
_RUNTIME_ONLY = (
    'or, to leave it to the runtime validator, add "# type: ignore[harness-undecidable]" here'
)


def unknown_entry_verdict(role: str, shown: str) -> Verdict:
    """A palette entry or key tool (``role``) whose type (``shown``, already quoted) is not one
    specific class, e.g. ``type[SplitNote]`` or a union: a type checker cannot prove it.

    The palette rules that need every entry (reachability, dead tools) are skipped then
    (``palette_verdicts(..., complete=False)``), never guessed; the runtime validator, which
    sees the classes, decides them when the thinker is built.
    """
    return Verdict(
        "harness-undecidable",
        shown,
        f"{role} of type {shown} is not one specific tool class: the palette cannot be proved "
        "legal at type-check time",
        (
            "Its subclasses (or the members of a union) may break any rule; reachability and "
            "dead tools are not judged while an entry is unknown",
            "Pass the tool classes themselves, in a tuple literal or a Final tuple constant, "
            + _RUNTIME_ONLY,
        ),
    )


def unseen_name_verdict(label: str, decorator: str, key: str = "") -> Verdict:
    """``label`` has no ``@tool_name`` a type checker can see, but another decorator
    (``decorator``, e.g. a library's wrapper of ``tool_name``) may name it at run time."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: its decorator "
        f"{_q(decorator)} may name it at run time, but it is not @tool_name",
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Stack @tool_name("...") under @{decorator} on the class (or have the decorator '
            "return tool_name(...)(cls) where the class is defined), " + _RUNTIME_ONLY,
        ),
        definition=True,
        key=key,
    )


def aliased_name_verdict(label: str, alias: str) -> Verdict:
    """A palette naming ``label`` (which has no ``@tool_name`` of its own) through the variable
    ``alias``, whose value a type checker cannot read: it is not assigned a literal
    ``tool_name("...")(label)`` call as a statement at the top of its module (a helper's
    return, say), which may have named the class."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: the palette names it "
        f"through the variable {_q(alias)}, which a call such as "
        f'tool_name("...")({label}) may have named',
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Assign {alias} = tool_name("...")({label}) with a literal, as a statement at the '
            f'top of its module, or decorate the class with @tool_name("..."), ' + _RUNTIME_ONLY,
        ),
        key="",
    )


def call_form_verdict(label: str, module: str, why: str) -> Verdict:
    """``label`` (no ``@tool_name`` of its own) is named by a ``tool_name(...)(label)`` call in
    ``module`` whose effect a type checker cannot promise (``why``: the call sits in a function
    or under a condition, computes its name, disagrees with another call, or is in a module that
    imports the palette's module back)."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: a call "
        f"tool_name(...)({label}) in module {_q(module)} {why}",
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Name it once with tool_name("...")({label}) and a literal, as a statement at the '
            "top of a module the palette's module imports, or decorate the class with "
            '@tool_name("..."), ' + _RUNTIME_ONLY,
        ),
        key="",
    )


def unread_call_form_verdict(label: str, module: str) -> Verdict:
    """``label`` (no ``@tool_name`` of its own) is named by no call mypy can see, but ``module``,
    which the palette's module imports and which reaches the class, has function bodies mypy
    does not read (its errors are silenced: ``follow_imports = silent``, or its directory is on
    the Python path, where mypy treats it as installed): a call in one of them may name it."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: no call "
        f"tool_name(...)({label}) is in sight, but mypy does not read the function bodies of "
        f"module {_q(module)} (its errors are silenced), where one may name it",
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Name it once with tool_name("...")({label}) and a literal, as a statement at the '
            "top of a module the palette's module imports, or decorate the class with "
            f'@tool_name("..."), or let mypy read {_q(module)} (follow_imports = normal for it, '
            "and its directory off PYTHONPATH), " + _RUNTIME_ONLY,
        ),
        key="",
    )


def container_entry_verdict(role: str, shown: str, how: str) -> Verdict:
    """A palette entry or key tool (``role``) read from a container or a call (``how``, e.g.
    'a dict' or 'a call'): a type checker sees the join of everything it could hold (``shown``),
    never which class it is."""
    return Verdict(
        "harness-undecidable",
        shown,
        f"{role} read from {how} cannot be proved at type-check time: the type checker only "
        f"sees {shown}",
        (
            "Its class may break any rule; reachability and dead tools are not judged while an "
            "entry is unknown",
            "Name the tool classes themselves, in a tuple literal or a Final tuple constant, "
            + _RUNTIME_ONLY,
        ),
    )


def overridable_entry_verdict(role: str, attribute: str) -> Verdict:
    """A palette entry, palette or key tool read from a class attribute a subclass may
    override (``self.SPLITTER``): the class it holds in a subclass is not known here."""
    return Verdict(
        "harness-undecidable",
        attribute,
        f"{role} read from the class attribute {_q(attribute)} cannot be proved at type-check "
        "time: a subclass may override it with another class",
        (
            "Reachability and dead tools are not judged while an entry is unknown",
            f'Declare it "{attribute}: Final = ..." (subclasses then cannot override it), or '
            "name the tool classes in the call, " + _RUNTIME_ONLY,
        ),
    )


def generic_input_verdict(shown: str) -> Verdict:
    """A palette checked where the thinker's input is still a type variable (a generic base
    thinker): reachability depends on what each subclass binds it to."""
    return Verdict(
        "harness-undecidable",
        shown,
        f"The thinker's input type {_q(shown)} is a type variable here: whether the key tool is "
        "reachable depends on what each subclass binds it to",
        (
            "Reachability and dead tools are judged for each subclass only when it is built",
            "Pass the palette from the class that binds the input (its own super().__init__), "
            + _RUNTIME_ONLY,
        ),
    )


def too_many_branches_verdict(limit: int) -> Verdict:
    """Conditional arguments with more than ``limit`` combinations of branches: not enumerated."""
    return Verdict(
        "harness-undecidable",
        "palette",
        f"The conditional key tool and palette have more than {limit} combinations of branches: "
        "the palette cannot be proved legal at type-check time",
        (
            "Choose among a few whole palettes (Final tuple constants) rather than entry by "
            "entry, " + _RUNTIME_ONLY,
        ),
    )


def undecidable_name_verdict(label: str, key: str = "") -> Verdict:
    """``@tool_name(...)`` on ``label`` with a name a type checker cannot read: neither a string
    literal nor a ``Final`` constant (an f-string, a call, a plain module variable)."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: it is not a string "
        "literal or a Final constant",
        (
            "Its validity and uniqueness in a palette are then only checked when a thinker is "
            "built",
            'Write @tool_name("...") with a literal, or declare the constant NAME: Final = "...", '
            + _RUNTIME_ONLY,
        ),
        definition=True,
        key=key,
    )


def unknown_input_verdict() -> Verdict:
    """The runtime validator's one "cannot prove": a thinker whose input type nothing binds at
    run time (built as ``DecisionThinker(...)``, or from a generic class left unsubscripted), so
    reachability and dead tools cannot be judged. Not an error that stops the build: nothing
    judged is broken, but the palette is not called legal either."""
    return Verdict(
        "harness-undecidable",
        "thinker",
        "The thinker's input type is not known at run time: whether the key tool is reachable "
        "and every palette tool can run is not judged",
        (
            "Python erases type arguments: the input is read from the thinker's bases, or from "
            "the subscripted class that builds it",
            "Bind the input where the thinker is built: subclass DecisionThinker[Note, Verdict], "
            "or build it as DecisionThinker[Note, Verdict](...)",
        ),
    )
