"""The thinkers of the shipped labelled runs: three small palettes, one per domain.

Each reads a batch of short texts (one item a line) and keeps the items its objective asks for:

* :class:`RefundFinder` (``support``): an inbox of support tickets; keeps those asking for money
  back;
* :class:`VegetarianFinder` (``recipes``): a cookbook page of recipes; keeps the vegetarian ones;
* :class:`PageFinder` (``logs``): a server log; keeps the entries that need an engineer now.

The palettes have the same shape (a splitter halving a batch of four items or more, and the
key tool reading a batch into its items), so a run asks ``next`` and ``<tool>_input`` choices
and a ``select_<ref>`` noul per item read; the labels of those selections follow from each
case's expected items. Nothing here calls a model.

The three domains' declarations repeat one shape on purpose (the shared logic is in
:class:`_Halve` and :class:`_ReadLines`): each domain's artifacts, tools and thinker are classes
written in source so that mypy and the plugin check every key tool and palette, and each class's
name, alias and docstring are what the model reads (the shipped runs record them), so a factory
would hide the types from the checker while saving only the lines that say what differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final, TypeVar, cast

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.errors import InvalidInputError
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable, list_iterand, tool_name, tool_types

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = [
    "DOMAIN_THINKERS",
    "Cookbook",
    "Inbox",
    "LogEntry",
    "LogFile",
    "PageFinder",
    "ReadEntries",
    "ReadRecipes",
    "ReadTickets",
    "Recipe",
    "RefundFinder",
    "SplitCookbook",
    "SplitInbox",
    "SplitLog",
    "Ticket",
    "VegetarianFinder",
    "VerbosePageFinder",
    "VerboseRefundFinder",
    "VerboseVegetarianFinder",
]

MIN_SPLIT: Final = 4
"""A batch of fewer items than this is not split (read it instead)."""


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _halves(text: str, what: str) -> tuple[str, str]:
    lines = _lines(text)
    if len(lines) < MIN_SPLIT:
        raise InvalidInputError(
            what, text, f"has {len(lines)} items; split only a batch of {MIN_SPLIT} or more"
        )
    middle = len(lines) // 2
    return "\n".join(lines[:middle]), "\n".join(lines[middle:])


@attrs.frozen
class _Text(Artifact, alias="text"):
    """A text: a batch of a domain's items (one a line), or one item."""

    text: str


B = TypeVar("B", bound=_Text)
T = TypeVar("T", bound=_Text)


class _Halve(DecisionTool[B, ListArtifact[B]]):
    """A domain's splitter: a batch of :data:`MIN_SPLIT` items or more into two halves."""

    what: ClassVar[str]  # the batch, as the model reads it in a refusal

    async def execute(self, input: B, context: JobContext) -> ListArtifact[B]:
        batch = type(input)
        return ListArtifact.of(batch, [batch(half) for half in _halves(input.text, self.what)])


class _ReadLines(DecisionTool[B, ListArtifact[T]]):
    """A domain's key tool: a batch read into its items, one a line (the item class is the
    declared output's)."""

    async def execute(self, input: B, context: JobContext) -> ListArtifact[T]:
        item = cast("type[T]", list_iterand(tool_types(type(self))[1]))
        return ListArtifact.of(item, [item(line) for line in _lines(input.text)])


# -- support tickets -------------------------------------------------------------------------
# The three domains repeat one shape (a batch, an item, a halving tool, a reading key tool, a
# thinker) written out as classes of their own, never made by a factory: the mypy plugin checks
# each palette, tool name and key tool's output statically, which classes built at run time hide.


@attrs.frozen
class Inbox(_Text, alias="inbox"):
    """Support tickets, one a line."""


@attrs.frozen
class Ticket(_Text, alias="ticket"):
    """One support ticket."""


@tool_name("split_inbox")
class SplitInbox(_Halve[Inbox]):
    """Splits an inbox of four tickets or more into two halves."""

    what = "inbox"


@tool_name("read_tickets")
class ReadTickets(_ReadLines[Inbox, Ticket]):
    """Reads an inbox into its tickets."""


@tool_name("find_refunds")
class RefundFinder(DecisionThinker[Inbox, Ticket]):
    """Keeps the support tickets that ask for money back."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Ticket,
            key_tool=ReadTickets,
            palette=(SplitInbox,),
            objective="Keep the support tickets in which the customer asks for a refund",
            max_turns=6,
        )


# -- recipes ---------------------------------------------------------------------------------


@attrs.frozen
class Cookbook(_Text, alias="cookbook"):
    """Recipes, one a line."""


@attrs.frozen
class Recipe(_Text, alias="recipe"):
    """One recipe."""


@tool_name("split_cookbook")
class SplitCookbook(_Halve[Cookbook]):
    """Splits a cookbook page of four recipes or more into two halves."""

    what = "cookbook"


@tool_name("read_recipes")
class ReadRecipes(_ReadLines[Cookbook, Recipe]):
    """Reads a cookbook page into its recipes."""


@tool_name("find_vegetarian")
class VegetarianFinder(DecisionThinker[Cookbook, Recipe]):
    """Keeps the recipes with no meat and no fish."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Recipe,
            key_tool=ReadRecipes,
            palette=(SplitCookbook,),
            objective="Keep the recipes that are vegetarian: no meat and no fish",
            max_turns=6,
        )


# -- server logs -----------------------------------------------------------------------------


@attrs.frozen
class LogFile(_Text, alias="log_file"):
    """Server log entries, one a line."""


@attrs.frozen
class LogEntry(_Text, alias="log_entry"):
    """One log entry."""


@tool_name("split_log")
class SplitLog(_Halve[LogFile]):
    """Splits a log of four entries or more into two halves."""

    what = "log"


@tool_name("read_entries")
class ReadEntries(_ReadLines[LogFile, LogEntry]):
    """Reads a log into its entries."""


@tool_name("find_pages")
class PageFinder(DecisionThinker[LogFile, LogEntry]):
    """Keeps the log entries that need an engineer now."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=LogEntry,
            key_tool=ReadEntries,
            palette=(SplitLog,),
            objective="Keep the log entries that need an engineer to act now",
            max_turns=6,
        )


# -- the same thinkers under the verbose question scheme (to weigh the two schemes) ------------


class VerboseRefundFinder(RefundFinder):
    """:class:`RefundFinder` asking under the verbose question scheme."""

    question_scheme = "verbose"


class VerboseVegetarianFinder(VegetarianFinder):
    """:class:`VegetarianFinder` asking under the verbose question scheme."""

    question_scheme = "verbose"


class VerbosePageFinder(PageFinder):
    """:class:`PageFinder` asking under the verbose question scheme."""

    question_scheme = "verbose"


DOMAIN_THINKERS: Final[dict[str, type[DecisionThinker[Artifact, Artifact]]]] = {
    "support": RefundFinder,  # type: ignore[dict-item]  # each binds its own input and output
    "recipes": VegetarianFinder,  # type: ignore[dict-item]
    "logs": PageFinder,  # type: ignore[dict-item]
}
"""The thinker of each domain's runs."""
