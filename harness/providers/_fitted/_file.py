"""The fitted file: data only, JSON beside a ``.npz`` of arrays; never pickle.

``model.json`` holds what a person reads and what was fitted::

    {"format": "harness-fitted", "version": 1,
     "encoder": {"name": "tfidf", ...},          # the encoder's settings (a vocabulary, ...)
     "heads": [{"key": "select", "role": "select", "form": "binary", "version": "...", ...}],
     "base": "embedded",                           # who answers a question no head answers
     "fitted_on": {...}, "figures": {...}, "library": {...},
     "arrays": {"sha256": "..."},                # of model.npz, beside it
     "digest": "..."}                              # sha256 of the rest, canonical JSON

and ``model.npz`` (the same name, so the two move together) the numbers (``encoder.*``,
``head.<i>.weights``, ``head.<i>.bias``), read with ``allow_pickle=False``. A file that is
missing, cut, edited (the digests), of another format or version, or whose arrays do not fit its
heads fails at load with one line naming the file and the fix (:class:`FittedError`).
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, cast

import attrs
import numpy as np
import orjson
from numpy.typing import NDArray

from ._encoders import Encoder, encoder_from
from ._errors import FittedError
from ._heads import FORMS, Form, Head

__all__ = [
    "FORMAT",
    "VERSION",
    "FittedModel",
    "amend_fitted",
    "arrays_path",
    "load_fitted",
    "write_fitted",
]

FORMAT: Final = "harness-fitted"
VERSION: Final = 1


def arrays_path(path: Path) -> Path:
    """Where the arrays of the fitted file at ``path`` live: the same name with ``.npz``."""
    return (
        path.with_suffix(".npz") if path.suffix == ".json" else path.with_name(path.name + ".npz")
    )


def _canonical(document: Mapping[str, object]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


@attrs.frozen(eq=False)
class FittedModel:
    """A loaded fitted file: its encoder, its heads by key, its base and what it says of its
    fit (``document``: the JSON as read). ``digest`` is the file's own (12 hex digits shown)."""

    path: Path
    encoder: Encoder
    heads: Mapping[str, Head]
    base: str
    document: Mapping[str, object]
    digest: str

    @property
    def name(self) -> str:
        """The file's name, as answers and errors show it."""
        return self.path.name

    def agreement(self) -> Mapping[str, object] | None:
        """A distilled file's held-out agreement with its teacher (``value``, ``low``,
        ``high``, ``n``), as ``harness fit`` measured it; ``None`` when not measured."""
        figures = self.document.get("figures")
        found = figures.get("agreement") if isinstance(figures, Mapping) else None
        return found if isinstance(found, Mapping) else None

    @property
    def selection_threshold(self) -> float | None:
        """The threshold a thinker takes this file's selections at when its entry has none of
        its own (fitted by cross-validation on the training split; ``None``: the thinker's)."""
        found = self.document.get("selection_threshold")
        value = found.get("value") if isinstance(found, Mapping) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
        return None


def write_fitted(
    path: str | os.PathLike[str],
    encoder: Encoder,
    heads: Sequence[Head],
    *,
    base: str,
    about: Mapping[str, object],
) -> Path:
    """Write the fitted file at ``path`` (and its arrays beside it); ``about`` adds the
    ``fitted_on``, ``figures`` and ``library`` sections. Returns the JSON file's path."""
    target = Path(path)
    arrays: dict[str, NDArray[np.float64]] = dict(encoder.arrays())
    described: list[dict[str, object]] = []
    for i, head in enumerate(heads):
        arrays[f"head.{i}.weights"] = head.weights
        arrays[f"head.{i}.bias"] = head.bias
        described.append(head.describe())
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    packed = buffer.getvalue()
    where = arrays_path(target)
    document: dict[str, object] = {
        "format": FORMAT,
        "version": VERSION,
        "encoder": encoder.settings(),
        "heads": described,
        "base": base,
        **about,
        "arrays": {"sha256": hashlib.sha256(packed).hexdigest()},
    }
    document["digest"] = hashlib.sha256(_canonical(document)).hexdigest()
    target.parent.mkdir(parents=True, exist_ok=True)
    where.write_bytes(packed)
    target.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return target


def amend_fitted(path: str | os.PathLike[str], section: str, value: object) -> None:
    """Add (or replace) the top-level ``section`` of the fitted file at ``path`` (what ``harness
    fit`` measured after writing it: ``figures``), its digest made anew; heads and arrays stay
    as they are."""
    source = Path(path)
    document = _document(source)
    if section in ("format", "version", "encoder", "heads", "arrays", "digest"):
        raise ValueError(f"section {section!r} is what the file computes with: fit it again")
    document.pop("digest", None)
    document[section] = value
    document["digest"] = hashlib.sha256(_canonical(document)).hexdigest()
    source.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


def _refuse(path: Path, problem: str, fix: str = "fit it again with harness fit") -> FittedError:
    return FittedError(f"fitted file {str(path)!r}: {problem}; {fix}")


def _document(path: Path) -> dict[str, object]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _refuse(path, "not found", "give the .json file harness fit wrote (--out)") from None
    except OSError as error:
        raise _refuse(path, f"cannot be read ({error.strerror})", "check the path") from None
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _refuse(
            path,
            "is not JSON (cut short, or not a fitted file)",
            "give the .json file harness fit wrote, or fit it again",
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _refuse(
            path,
            f'is not a fitted file (no "format": "{FORMAT}")',
            "give the .json file harness fit wrote (--out)",
        )
    if document.get("version") != VERSION:
        raise _refuse(
            path,
            f"is of version {document.get('version')!r}; this harness reads version {VERSION}",
        )
    claimed = document.pop("digest", None)
    if claimed != hashlib.sha256(_canonical(document)).hexdigest():
        raise _refuse(path, "was changed after harness fit wrote it (its digest does not match)")
    document["digest"] = claimed
    return document


def _arrays(path: Path, document: Mapping[str, object]) -> dict[str, NDArray[np.float64]]:
    spec = document.get("arrays")
    if not isinstance(spec, Mapping):
        raise _refuse(path, "names no arrays")
    where = arrays_path(path)
    try:
        packed = where.read_bytes()
    except OSError:
        raise _refuse(
            path,
            f"its arrays {where.name!r} are missing",
            "keep the .npz harness fit wrote beside the .json, or fit it again",
        ) from None
    if hashlib.sha256(packed).hexdigest() != spec.get("sha256"):
        raise _refuse(path, f"its arrays {where.name!r} are not the ones it was written with")
    try:
        with np.load(io.BytesIO(packed), allow_pickle=False) as loaded:
            arrays = {name: np.asarray(loaded[name], dtype=np.float64) for name in loaded.files}
    except (ValueError, OSError, zipfile.BadZipFile) as error:
        raise _refuse(path, f"its arrays {where.name!r} cannot be read ({error})") from None
    return arrays


def _heads(
    path: Path, document: Mapping[str, object], arrays: Mapping[str, NDArray[np.float64]]
) -> dict[str, Head]:
    listed = document.get("heads")
    if not isinstance(listed, list) or not listed:
        raise _refuse(path, "holds no heads")
    heads: dict[str, Head] = {}
    for i, raw in enumerate(listed):
        if not isinstance(raw, dict):
            raise _refuse(path, f"heads[{i}] is not an object")
        key, role, form, classes = (raw.get(k) for k in ("key", "role", "form", "classes"))
        if not isinstance(key, str) or not isinstance(role, str) or form not in FORMS:
            raise _refuse(path, f"heads[{i}] needs a key, a role and a form ({', '.join(FORMS)})")
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise _refuse(path, f"heads[{i}].classes is not a list of strings")
        weights, bias = arrays.get(f"head.{i}.weights"), arrays.get(f"head.{i}.bias")
        if weights is None or bias is None:
            raise _refuse(path, f"its arrays hold no weights for heads[{i}] ({key!r})")
        meta = {k: v for k, v in raw.items() if k not in _HEAD_FIELDS}
        head = Head(key, role, cast(Form, form), weights, bias, tuple(classes), meta)
        if raw.get("version") != head.version:
            raise _refuse(path, f"heads[{i}] ({key!r}) is not the head it was written with")
        heads[key] = head
    return heads


_HEAD_FIELDS: Final = frozenset({"key", "role", "form", "classes", "dimensions", "version"})


def load_fitted(path: str | os.PathLike[str]) -> FittedModel:
    """The fitted file at ``path``, checked whole (see the module's notes)."""
    source = Path(path).expanduser()
    document = _document(source)
    arrays = _arrays(source, document)
    settings = document.get("encoder")
    if not isinstance(settings, Mapping):
        raise _refuse(source, "names no encoder")
    try:
        encoder = encoder_from(settings, arrays)
    except KeyError as missing:
        raise _refuse(source, f"its arrays hold no {missing.args[0]!r}") from None
    except FittedError as error:
        raise FittedError(f"fitted file {str(source)!r}: {error}") from None
    heads = _heads(source, document, arrays)
    width = encoder.width
    for head in heads.values():
        if head.dimensions != width:
            raise _refuse(
                source,
                f"head {head.key!r} reads {head.dimensions} features, its encoder gives {width}",
            )
    base = document.get("base")
    if not isinstance(base, str) or not base.strip():
        raise _refuse(source, "names no base model")
    return FittedModel(source, encoder, heads, base, document, str(document["digest"]))
