"""``harness models``: what is configured, and where each value came from (never a key)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from harness.cli._common import CliError, add_catalog_option, say

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["DESCRIPTION", "add_arguments", "describe_models", "list_models"]


DESCRIPTION: Final = (
    "List the entries of the configured catalog (--catalog, else $HARNESS_CATALOG, else "
    "the shipped one, plus the entries TYPESAFE_* variables give), the decision pin, and "
    "the configuration variables with where each value came from. Keys show only as "
    "set or not set."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness models``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    add_catalog_option(parser)
    parser.set_defaults(command=list_models)


def describe_models(catalog_path: str | None = None) -> list[str]:
    """The lines ``harness models`` prints."""
    from harness.catalog import (
        DECISION,
        HARNESS_CATALOG,
        OPENAI_API_KEY,
        OPENAI_BASE_URL,
        TYPESAFE_API_KEY,
        TYPESAFE_BASE_URL,
        TYPESAFE_DEFAULT_MODEL,
        TYPESAFE_ENTRY,
        CatalogError,
        TokenizerError,
        load_catalog,
        read_environment,
    )

    environment = read_environment()
    try:
        catalog = load_catalog(catalog_path)
        file_only = load_catalog(
            catalog_path, environ={HARNESS_CATALOG: environment.catalog_path or ""}
        )
    except (CatalogError, TokenizerError) as error:
        raise CliError(str(error)) from None
    if catalog_path is not None:
        origin = f"catalog file {catalog_path} (--catalog)"
    elif environment.catalog_path is not None:
        origin = f"catalog file {environment.catalog_path} (${HARNESS_CATALOG})"
    else:
        origin = "the shipped catalog"
    lines = [f"catalog: {origin}"]
    pin = catalog.pins.get(DECISION)
    if pin is None:
        lines.append("decision pin: none (pass model= or --entry)")
    elif pin == TYPESAFE_ENTRY and file_only.pins.get(DECISION) != pin:
        lines.append(f"decision pin: {pin} (${TYPESAFE_DEFAULT_MODEL} is set)")
    else:
        lines.append(f"decision pin: {pin} (from {origin})")
    lines.append("entries:")
    for entry in catalog.entries.values():
        from_env = entry.id not in file_only.entries
        where = "environment" if from_env else origin
        price = (
            "no price"
            if entry.input_price_per_million is None
            else f"${entry.input_price_per_million:g} per million input tokens"
        )
        bound = (
            f"tpm {entry.tpm}" + (f", rpm {entry.rpm}" if entry.rpm else "")
            if entry.bound == "window"
            else f"max_concurrent {entry.max_concurrent}"
        )
        lines.append(f"  {entry.id}: {entry.provider} {entry.wire_model_id!r} (from {where})")
        if entry.base_url is not None:
            base_source = ""
            if from_env:
                given = environment.get(TYPESAFE_BASE_URL)
                base_source = f" (${TYPESAFE_BASE_URL})" if given else " (default)"
            lines.append(f"    url: {entry.url}{base_source}")
        if from_env:
            given = environment.get(TYPESAFE_DEFAULT_MODEL)
            lines.append(
                f"    wire model: {entry.wire_model_id} "
                + (f"(${TYPESAFE_DEFAULT_MODEL})" if given else "(default)")
            )
        if entry.api_key_env is not None:
            state = "set" if entry.api_key is not None else "NOT SET"
            lines.append(f"    key: ${entry.api_key_env} ({state})")
        lines.append(f"    {bound}; {price}")
        files = _sub_files(catalog_path or environment.catalog_path, entry.id)
        lines.extend(_fitted_lines(entry, files))
    lines.append("model strings:")
    typesafe = environment.get(TYPESAFE_BASE_URL) or "https://api.typesafe.ai"
    lines.append(
        f"  systemone:<wire model> -> {typesafe} "
        f"(key ${TYPESAFE_API_KEY}: {_state(environment.get(TYPESAFE_API_KEY))})"
    )
    openai = environment.get(OPENAI_BASE_URL) or "https://api.openai.com"
    lines.append(
        f"  openai:<model> -> {openai} "
        f"(key ${OPENAI_API_KEY}: {_state(environment.get(OPENAI_API_KEY))})"
    )
    lines.append(
        f"  openai-chat:<model>[@<url>], openai-completions:<model>[@<url>] -> <url> or {openai} "
        f"(token logprobs; key ${OPENAI_API_KEY}: {_state(environment.get(OPENAI_API_KEY))})"
    )
    lines.append("  embedded -> the in-process model (sparrow-decider), always available")
    lines.append(f"  llama:<file.gguf or package> -> a GGUF run in this process ({_llama_state()})")
    lines.append(
        "  fitted:<file.json> -> a decider harness fit wrote, in this process (its base model "
        "answers the questions it has no head for)"
    )
    lines.append("variables:")
    for setting in environment.settings():
        lines.append(f"  {setting.name}: {setting.value} ({setting.source})")
    return lines


def _llama_state() -> str:
    """Whether the ``llama`` provider can run here: llama-cpp-python installed, or how to."""
    import importlib.util

    from harness.providers._internal import LLAMA_INSTALL

    if importlib.util.find_spec("llama_cpp") is not None:
        return "llama-cpp-python installed"
    return f"llama-cpp-python not installed: {LLAMA_INSTALL}"


def _sub_files(catalog_file: str | None, entry_id: str) -> dict[str, str]:
    """The files an entry's ``[entries.calibration]`` and ``[entries.examples]`` name in the
    catalog file (``{"examples": "examples.json"}``); none for the shipped catalog or a table
    written inline."""
    import tomllib

    if catalog_file is None:
        return {}
    try:
        with open(catalog_file, "rb") as file:
            data = tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # loaded already: what is wrong was said then
    found: dict[str, str] = {}
    for table in data.get("entries", []):
        if isinstance(table, dict) and table.get("id") == entry_id:
            for key in ("calibration", "examples"):
                sub = table.get(key)
                if isinstance(sub, dict) and isinstance(sub.get("file"), str):
                    found[key] = sub["file"]
    return found


def _fitted_lines(entry: CatalogEntry, files: dict[str, str]) -> list[str]:
    """What was fitted for ``entry``: its solved examples (per role, what they were drawn from)
    and its calibration (its roles, what it was fitted on, its threshold), each with its file."""
    lines = []
    examples = entry.examples
    if examples is not None:
        roles = ", ".join(
            f"{role} {len(found)}" for role, found in sorted(examples.by_role.items())
        )
        where = f"file {files['examples']}" if "examples" in files else "inline"
        how = "" if examples.method in examples.drawn_from else f", {examples.method}"
        lines.append(
            f"    examples: {roles or 'none'} ({where}); drawn from {examples.drawn_from}{how}"
        )
    calibration = entry.calibration
    if calibration is not None:
        roles = ", ".join(
            f"{role} {found.method}" for role, found in sorted(calibration.roles.items())
        )
        where = f"file {files['calibration']}" if "calibration" in files else "inline"
        fitted = calibration.fitted_on or "not said"
        threshold = calibration.selection_threshold
        more = "" if threshold is None else f"; selection threshold {threshold:g}"
        lines.append(f"    calibration: {roles or 'none'} ({where}); fitted on {fitted}{more}")
    return lines


def _state(value: str | None) -> str:
    return "set" if value is not None else "not set"


def list_models(args: argparse.Namespace) -> int:
    """Print the configuration."""
    for line in describe_models(args.catalog):
        say(line)
    return 0
