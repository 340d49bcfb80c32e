"""What the commands share: the usage error, the target and input arguments, the catalog and
entry options, the concurrency and Ray options, the record path.

Light on purpose: ``harness --help`` and ``--version`` import this module, so the catalog and
the record are imported only by the functions that use them.

One concern, past 400 lines: what every command's parser and reporting share (each shared
option beside its check, the usage error, the turn lines), so an option is added once and reads
the same in every command.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, TypeVar

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.artifacts import Artifact
    from harness.catalog import Catalog
    from harness.jobs import JobEvent
    from harness.record import RunFailedError
    from harness.scope import Identifiable

A = TypeVar("A", bound="Artifact")

__all__ = [
    "ALLOW_EXTRA",
    "DEFAULT_RECORD",
    "ENTRY_ALIAS",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "MODEL_CHOICES",
    "MODEL_HELP",
    "CliError",
    "TurnLines",
    "add_allow_extra_option",
    "add_catalog_option",
    "add_concurrency_option",
    "add_input_options",
    "add_model_options",
    "add_quiet_option",
    "add_resamples_option",
    "add_scale_options",
    "add_target_argument",
    "artifact_from",
    "catalog_from",
    "check_at_least",
    "check_concurrency",
    "check_record_path",
    "debugging",
    "input_text",
    "loaded_catalog",
    "model_help",
    "one_model",
    "report_failed_run",
    "say",
    "usage_errors",
    "write_output",
]

DEFAULT_RECORD: Final = "harness-record.json"
"""Where ``harness demo`` writes the run's record by default (``harness run`` writes one only
where ``--record PATH`` says)."""

EXIT_USAGE: Final = 2
"""A command given wrong arguments, files or names: nothing ran."""

EXIT_FAILED: Final = 1
"""The run started and failed."""


class CliError(HarnessError):
    """A usage problem the user can fix: printed as one line, exit code 2, no traceback."""


def say(text: str, *, error: bool = False) -> None:
    """Print a line at once (progress must show as it happens, even through a pipe)."""
    stream = sys.stderr if error else sys.stdout
    print(text, file=stream, flush=True)


def debugging() -> bool:
    """Whether ``HARNESS_DEBUG`` asks for tracebacks (any value but empty or ``0``)."""
    return os.environ.get("HARNESS_DEBUG", "") not in ("", "0")


def report_failed_run(command: str, failed: RunFailedError, record_path: str | None) -> int:
    """A run that started and failed: one line naming the error's type and message (the
    traceback too under ``HARNESS_DEBUG=1``), the partial record written when a path is given;
    returns exit 1.

    The error is the run's (a tool's own crash, a model that failed): not a harness bug.
    """
    from harness.record import counted

    if debugging():
        traceback.print_exception(failed.error)
    say(f"harness {command}: the run failed: {failed}", error=True)
    record = failed.record
    if record_path is None:
        say(
            f"record: not written (partial: {counted(len(record.turns), 'turn')}); pass "
            "--record PATH to keep it",
            error=True,
        )
        return EXIT_FAILED
    record.write(record_path)
    say(
        f"record: {record_path} (partial: {counted(len(record.turns), 'turn')}, "
        f"{counted(len(record.calls), 'decision')} before the failure)",
        error=True,
    )
    return EXIT_FAILED


def add_target_argument(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The ``MODULE:CLASS`` positional (``target``), read by :func:`harness.runs.import_target`;
    ``optional`` where another option can stand for it (``harness run --resume``)."""
    parser.add_argument(
        "target",
        metavar="MODULE:CLASS",
        nargs="?" if optional else None,
        help="e.g. mypackage.triage:Triage, or a file: triage.py:Triage",
    )


def add_input_options(parser: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """``--input JSON`` or ``--input-file FILE`` (one of them), read by :func:`input_text`;
    ``default`` says what a command takes when neither is given."""
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--input",
        metavar="JSON",
        help="the input artifact as a JSON object" + (f" (default: {default})" if default else ""),
    )
    given.add_argument("--input-file", metavar="FILE", help="a file holding the input's JSON")
    add_allow_extra_option(parser, "the input")


ALLOW_EXTRA: Final = "pass --allow-extra"
"""The opt-out an unknown input field's line names (see :func:`add_allow_extra_option`)."""


def add_allow_extra_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--allow-extra``: drop the keys of ``what`` (an input's JSON) that are not fields of its
    class, instead of refusing them by name."""
    parser.add_argument(
        "--allow-extra",
        action="store_true",
        help=f"drop the keys of {what} that are not fields of its class (default: refuse them "
        "by name)",
    )


def artifact_from(input_type: type[A], text: str, args: argparse.Namespace, what: str) -> A:
    """The artifact ``text`` (JSON) gives for ``input_type``, honouring ``--allow-extra``; a bad
    one is a usage error: ``bad <what>: <the problem>``."""
    from harness.artifacts import UnknownFieldError, from_json

    try:
        return from_json(input_type, text, allow_extra=args.allow_extra)
    except UnknownFieldError as error:
        raise CliError(f"bad {what}: {error.line(ALLOW_EXTRA)}") from None
    except (TypeError, ValueError) as error:
        raise CliError(f"bad {what}: {error}") from None


def input_text(args: argparse.Namespace) -> str | None:
    """The input's JSON text: ``--input``, else the file ``--input-file`` names (a file that
    cannot be read or is not UTF-8 is a usage error), else None."""
    if args.input is not None:
        return str(args.input)
    if args.input_file is None:
        return None
    try:
        with open(args.input_file, encoding="utf-8") as file:
            return file.read()
    except OSError as error:
        raise CliError(f"cannot read --input-file {args.input_file}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"--input-file {args.input_file} is not UTF-8 text") from None


def add_catalog_option(parser: argparse.ArgumentParser) -> None:
    """``--catalog FILE``: the catalog a command loads (default: ``$HARNESS_CATALOG``, else
    the shipped one)."""
    parser.add_argument(
        "--catalog",
        metavar="FILE",
        help="catalog TOML file (default: $HARNESS_CATALOG, else the shipped catalog)",
    )


MODEL_CHOICES = (
    "a catalog entry id, or a model string: 'embedded', 'systemone:<model>', "
    "'openai:<model>' (configured from TYPESAFE_* / OPENAI_* variables), "
    "'openai-chat:<model>[@<url>]' or 'openai-completions:<model>[@<url>]' (any "
    "OpenAI-compatible server with logprobs), 'llama:<file.gguf or package>' (a GGUF in "
    "this process), 'fitted:<file.json>' (a decider harness fit wrote)"
)
"""Who may answer, as every command's ``--entry`` / ``--model`` help says it."""

MODEL_HELP: Final = (
    f"who answers: {MODEL_CHOICES}; default: the catalog's decision pin (the shipped catalog's "
    "is the embedded model)"
)
"""The help of every command's ``--entry`` / ``--model`` option (see :func:`model_help`)."""


def model_help(*, same_as: str | None = None) -> str:
    """The help of a command's ``--entry`` or ``--model``: :data:`MODEL_HELP`, and the other
    option it is the same as (``--model`` beside ``--entry``) when a command takes both."""
    return MODEL_HELP + (f"; the same as {same_as}" if same_as else "")


ENTRY_ALIAS: Final = "the same as --model (its other name)"
"""The help of ``--entry``: every command that takes a model takes both names."""


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``--catalog FILE``, ``--model M`` and its other name ``--entry M``, both on every command
    that takes a model (:func:`one_model` makes them one choice), and ``--verbose``."""
    add_catalog_option(parser)
    parser.add_argument("--model", metavar="M", help=model_help())
    parser.add_argument("--entry", metavar="M", help=ENTRY_ALIAS)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the log of a model run in this process (llama.cpp's own lines, on stderr; "
        "silent by default); HARNESS_LLAMA_LOG=1 does the same",
    )


def one_model(args: argparse.Namespace) -> None:
    """Make ``--model`` and ``--entry`` one choice: both attributes hold the one given (a
    command reads either); two different ones are a usage error. ``--verbose`` turns on the
    log of a model run in this process."""
    if not (hasattr(args, "model") and hasattr(args, "entry")):
        return
    if args.model is not None and args.entry is not None and args.model != args.entry:
        raise CliError(
            f"--model {args.model} and --entry {args.entry} name different models: give one "
            "(--entry is --model's other name)"
        )
    chosen = args.model if args.model is not None else args.entry
    args.model = args.entry = chosen
    if getattr(args, "verbose", False):
        from harness.providers._internal import LLAMA_LOG_ENV

        os.environ[LLAMA_LOG_ENV] = "1"  # read by this process and any worker it starts


DEFAULT_CONCURRENCY: Final = 8
"""``--concurrency`` when not given: the inputs or cases in flight."""


def add_concurrency_option(
    parser: argparse.ArgumentParser,
    what: str,
    default: int | None = DEFAULT_CONCURRENCY,
    *,
    more: str = "",
) -> None:
    """``--concurrency N``: how many of ``what`` run at once (``None``: not given, resolved by
    :func:`check_concurrency`); ``more`` ends the help text."""
    shown = DEFAULT_CONCURRENCY if default is None else default
    parser.add_argument(
        "--concurrency",
        type=int,
        default=default,
        metavar="N",
        help=f"{what} in flight (default {shown}){more}",
    )


def add_choice_option(
    parser: argparse.ArgumentParser, flag: str, choices: tuple[str, ...], help: str
) -> None:
    """``flag`` taking one of ``choices``, the first of them its default."""
    parser.add_argument(flag, choices=choices, default=choices[0], help=help)


def add_resamples_option(parser: argparse.ArgumentParser) -> None:
    """``--resamples N``: the bootstrap's resamples (default 1000)."""
    parser.add_argument(
        "--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples"
    )


def add_measuring_options(parser: argparse.ArgumentParser, what: str, concurrency: int) -> None:
    """The options of a command that asks a model and measures the answers held out: the model
    (:func:`add_model_options`), ``--seed N``, ``--concurrency N`` (``what`` in flight, default
    ``concurrency``) and ``--resamples N``."""
    add_model_options(parser)
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the seed (default 0)")
    add_concurrency_option(parser, what, default=concurrency)
    add_resamples_option(parser)


def add_scale_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--concurrency N`` (checked and resolved by :func:`check_concurrency`) and ``--ray``: how
    many of ``what`` (``inputs``, ``cases``) run at once, and whether on Ray."""
    add_concurrency_option(
        parser,
        what,
        None,
        more="; on an entry that runs its model in this process (llama) also its contexts over "
        "the one loaded model, in each process (default: the entry's max_concurrent)",
    )
    parser.add_argument(
        "--ray",
        metavar="auto|ADDRESS|local",
        help=f"run the {what} on Ray: a running cluster (auto), one at ADDRESS, or one started "
        "here (local)",
    )


def check_concurrency(args: argparse.Namespace) -> None:
    """Refuse ``--concurrency`` below 1, and resolve it: ``args.concurrency`` is then what runs
    at once (:data:`DEFAULT_CONCURRENCY` when not given), ``args.contexts`` the contexts of an
    entry that runs its model in this process (``None`` when not given: the entry's own)."""
    given = getattr(args, "concurrency", None)
    if given is not None and given < 1:
        raise CliError("--concurrency must be at least 1")
    args.contexts = given
    args.concurrency = DEFAULT_CONCURRENCY if given is None else given


def check_at_least(args: argparse.Namespace, **least: int) -> None:
    """Refuse each named option below its least value (``check_at_least(args, k=1)``:
    ``--k must be at least 1``), in the order given."""
    for name, minimum in least.items():
        if getattr(args, name) < minimum:
            raise CliError(f"--{name.replace('_', '-')} must be at least {minimum}")


@contextlib.contextmanager
def usage_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Within the block, an error of ``kinds`` (bad data, a broken catalog: what the user
    fixes) is a usage error: its one line, exit 2, no traceback."""
    try:
        yield
    except kinds as error:
        raise CliError(str(error)) from None


def loaded_catalog(args: argparse.Namespace) -> Catalog | None:
    """The catalog ``--catalog FILE`` names (``None`` without it: the configured one); a
    broken file is a usage error."""
    if not args.catalog:
        return None
    from harness.catalog import CatalogError, load_catalog

    try:
        return load_catalog(args.catalog)
    except CatalogError as error:
        raise CliError(str(error)) from None


def catalog_from(args: argparse.Namespace) -> Catalog:
    """The catalog the options name, with ``--entry`` pinned to the decision seat (checked now,
    so an unknown entry fails before anything runs)."""
    from harness.catalog import DECISION, CatalogError, TokenizerError, load_catalog
    from harness.runs import seat_for  # entry ids and model strings alike; checks the entry

    try:
        catalog = seat_for(args.entry, load_catalog(args.catalog)).catalog
        catalog.pinned(DECISION)
    except (CatalogError, TokenizerError) as error:
        raise CliError(_for_the_command_line(str(error))) from None
    return catalog


def _for_the_command_line(message: str) -> str:
    """The run API's message, minus what only Python can pass (a client object)."""
    return message.replace(", or a DecisionClient", " (see `harness models`)")


def check_record_path(path: str) -> None:
    """Refuse, before the run, a record path that cannot be a file: a folder, or one under a
    file. A folder that is not there yet is made when the record is written (``runs/x.json``)."""
    folder = os.path.dirname(os.path.abspath(path))
    above = folder
    while not os.path.exists(above):
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise CliError(f"cannot write the record to {path}: {above} is a file, not a folder")
    if os.path.isdir(path):
        raise CliError(f"cannot write the record to {path}: it is a folder; give a file name")


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no line per turn on stderr (see :class:`TurnLines`)."""
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="print no line per turn on stderr (the answer and what it used are still printed)",
    )


class TurnLines:
    """A run's progress on stderr: builds the tool through :meth:`build` (so it knows the run's
    world) and, given each progress event (:meth:`__call__`), prints a line per turn as it ends
    (:func:`harness.record.progress_line`: the move, what came of it, the turn's time); nothing
    when ``quiet``. stdout is left to the answer."""

    def __init__(self, tool_class: type[Any], *, quiet: bool) -> None:  # Any: any tool class
        self.tool_class = tool_class
        self.quiet = quiet
        self.tool: object = None
        self._last = time.perf_counter()

    def build(self, parent: Identifiable) -> Any:  # Any: the tool class's own type
        """Build the tool as the run would (its ``(parent)`` constructor), keeping it."""
        self.tool = self.tool_class(parent)
        self._last = time.perf_counter()
        return self.tool

    def __call__(self, event: JobEvent) -> None:
        from harness.artifacts import TextFormatterRegistry
        from harness.record import progress_line, turn_of

        turn = turn_of(event)
        now = time.perf_counter()
        if turn is None or self.quiet:
            return
        world = getattr(self.tool, "registry", None)
        formatters = getattr(self.tool, "formatters", None) or TextFormatterRegistry()
        say(progress_line(turn, world, formatters, now - self._last), error=True)
        self._last = now


def write_output(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to the file a command's option names (``--html OUT``, ``--junit
    FILE``, ...); a file that cannot be written is a usage error naming it and why."""
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise CliError(f"cannot write {os.fspath(path)}: {error.strerror}") from None
