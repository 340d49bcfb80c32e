"""The ``harness`` command: ``demo``, ``run``, ``models``, ``record``, ``replay`` and ``serve``.

Usage problems (an unknown entry, bad JSON input, a missing module or file) print one line and
exit with 2, with no traceback; a run that starts and fails (a tool of yours crashing, a model
that fails, a budget refusing a call) prints the error's type and message and exits with 1
(writing the partial record where ``--record`` says); ``HARNESS_DEBUG=1`` shows the traceback of
a failed run or of an unexpected error.

A command's module is imported only when that command runs, so ``harness --help`` and
``harness --version`` load nothing heavy (no aiohttp, tiktoken, numpy).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import Final, NoReturn, Protocol

from harness.cli._common import EXIT_FAILED, EXIT_USAGE, CliError, debugging, one_model

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: Final[dict[str, str]] = {
    "demo": "find the statements that decide a price change in a folder (offline, no setup)",
    "run": "run a thinker class on an input given as JSON",
    "models": "list the configured models and where each value came from (never a key)",
    "record": "show a recorded run turn by turn (or --html OUT for a page of bars)",
    "replay": (
        "re-run a thinker offline from a record; exit 0 when it takes the same moves and answer"
    ),
    "serve": "serve a catalog entry as a System One server on 127.0.0.1",
    "batch": "run a thinker over every line of a JSONL file (resumable; local or on Ray)",
    "check": "check every thinker's palette and every tool in packages or files (no mypy)",
    "eval": "score a thinker on a labelled dataset, or compare two evals (CI gates)",
    "examples": "fit a local model's solved examples on a pack's dev split, report them held out",
    "fit": "fit a decider on labelled decisions (or a model's records), report it held out",
}
"""Each command and its one-line help (its module is loaded by :func:`command_module`)."""


class CommandModule(Protocol):
    """A command's module: what its ``--help`` says above the options, and its arguments (the
    parser's defaults carry the function to run). Its one-line help is :data:`COMMANDS`'."""

    DESCRIPTION: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to its ``parser``."""


def command_module(name: str) -> CommandModule:
    """The module of command ``name``, imported only now, with a plain ``import`` statement each
    (no ``importlib``), so the layer test reads every module the CLI loads."""
    if name == "demo":
        from harness.cli import _demo as demo

        return demo
    if name == "run":
        from harness.cli import _run as run

        return run
    if name == "models":
        from harness.cli import _models as models

        return models
    if name == "record":
        from harness.cli import _record as record

        return record
    if name == "replay":
        from harness.cli import _replay as replay

        return replay
    if name == "serve":
        from harness.cli import _serve as serve

        return serve
    if name == "batch":
        from harness.cli import _batch as batch

        return batch
    if name == "check":
        from harness.cli import _check as check

        return check
    if name == "eval":
        from harness.cli import _eval as evals

        return evals
    if name == "examples":
        from harness.cli import _examples as examples

        return examples
    if name == "fit":
        from harness.cli import _fit as fit

        return fit
    raise KeyError(f"no harness command {name!r}: the commands are {', '.join(COMMANDS)}")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose mistakes read as every other usage problem: one line (the
    command, what is wrong, the nearest option or choice when one is near), exit 2."""

    command: str | None = None
    """The command the arguments name (set on the top parser, which refuses their leftovers)."""

    def error(self, message: str) -> NoReturn:
        named = self.command in COMMANDS and self.prog == "harness"
        name = f"harness {self.command}" if named else self.prog
        hint = _near_miss(self, message) or f" (see {name} --help)"
        self.exit(EXIT_USAGE, f"{name}: error: {message}{hint}\n")


def _options_of(parser: argparse.ArgumentParser, command: str | None) -> list[str]:
    """The option strings of ``command``'s parser under ``parser`` (``parser``'s own when it
    has no such command)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            parser = action.choices[command]
    return [flag for action in parser._actions for flag in action.option_strings]


def _near_miss(parser: _Parser, message: str) -> str:
    """``"; did you mean '--model'?"`` for an unknown option or an invalid choice near a known
    one, else ``""``."""
    import difflib
    import re

    def near(given: str, known: list[str]) -> str:
        found = difflib.get_close_matches(given, known, n=1, cutoff=0.6)
        return f"; did you mean {found[0]!r}?" if found else ""

    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice is not None:
        return near(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
    if message.startswith("unrecognized arguments: "):
        known = _options_of(parser, parser.command)
        for given in message.removeprefix("unrecognized arguments: ").split():
            if given.startswith("-"):
                hint = near(given.partition("=")[0], known)
                if hint:
                    return hint
    return ""


def _stray_option(
    parser: argparse.ArgumentParser, command: str | None, given: Sequence[str]
) -> str | None:
    """The first ``--option`` of ``given`` that its command does not take (nor abbreviates),
    refused before argparse would first ask for a missing argument, so a mistyped
    ``--model`` is named as such."""
    if command not in COMMANDS:
        return None
    known = _options_of(parser, command) + _options_of(parser, None)
    for arg in given:
        if arg == "--":
            return None
        flag = arg.partition("=")[0]
        if flag.startswith("--") and not any(option.startswith(flag) for option in known):
            return arg
    return None


def build_parser(command: str | None = None, *, light: bool = False) -> argparse.ArgumentParser:
    """The ``harness`` argument parser. Every command's full parser by default; with ``light``
    only ``command``'s (the others listed by name and help), importing nothing else."""
    from harness import __version__

    parser = _Parser(
        prog="harness",
        description=(
            "Agents driven by decision models: run the demo or a thinker, list the configured "
            "models, read a record, serve a model."
        ),
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="name", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if light and name != command:
            commands.add_parser(name, help=help_text)
        else:
            module = command_module(name)
            module.add_arguments(
                commands.add_parser(name, help=help_text, description=module.DESCRIPTION)
            )
    for traced in ("run", "demo"):
        if not light or traced == command:
            from harness.cli import _observe  # only for the commands that run thinkers

            _observe.add_option(commands.choices[traced])
    parser.command = command
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _usage_problem(error: Exception) -> bool:
    """Whether ``error`` is a mistake in the user's ``MODULE:CLASS`` (a
    :class:`harness.runs.TargetError`, the same line and exit code from every command)."""
    from harness.runs import TargetError  # loaded already when one was raised

    return isinstance(error, TargetError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``harness`` command; returns the exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_in(given), light=True)
    stray = _stray_option(parser, _command_in(given), given)
    if stray is not None:
        parser.error(f"unrecognized arguments: {stray}")
    args = parser.parse_args(given)
    name = f"harness {args.name}"
    try:
        one_model(args)
        if hasattr(args, "otel_console"):
            from harness.cli import _observe

            with _observe.console_if_asked(args):
                code: int = args.command(args)
        else:
            code = args.command(args)
    except CliError as error:
        print(f"{name}: error: {error}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr, flush=True)
        return 130
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as error:
        if _usage_problem(error):  # the user's MODULE:CLASS, from any command
            print(f"{name}: error: {error}", file=sys.stderr, flush=True)
            return EXIT_USAGE
        if debugging():
            traceback.print_exc()
        else:
            print(
                f"{name}: unexpected error: {type(error).__name__}: {error} (set HARNESS_DEBUG=1 "
                "for the traceback, and please report it)",
                file=sys.stderr,
                flush=True,
            )
        return EXIT_FAILED
    return code
