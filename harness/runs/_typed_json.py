"""A durable run's typed data as JSON, exactly, and back: answers, model calls (with how a
logprob provider read them), responses, artifact types and tools' products.

What the journal (:mod:`harness.runs._journal`) writes on each turn's line and a resumed run
reads back; one concern, the shapes of the data, apart from the file that holds them.
"""

from __future__ import annotations

import hashlib
import json  # the stdlib: the state digest hashes json.dumps's exact text (", " separators)
from collections.abc import Mapping, Sequence
from typing import Any, get_args, get_origin

from harness.artifacts import Artifact, ListArtifact, artifact_converter
from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    RefusedAnswer,
    ScoreAnswer,
)
from harness.jobs import ModelCall
from harness.replay._internal import UncheckedJson, with_kept
from harness.runs._target import import_object

__all__ = [
    "Classes",
    "answer_json",
    "answer_of",
    "call_json",
    "call_of",
    "class_path",
    "import_class",
    "known_classes",
    "product_json",
    "product_of",
    "request_digest",
    "response_json",
    "response_of",
    "type_name",
    "type_of",
    "type_spec",
]


def request_digest(request: DecisionRequest) -> str:
    """A digest of what the model is asked (the state and the questions)."""
    text = json.dumps(request.state, sort_keys=True, ensure_ascii=False) + repr(
        list(request.questions.items())
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def answer_json(answer: Answer) -> UncheckedJson:
    """An answer as JSON, exactly (every probability as written)."""
    if isinstance(answer, ChoiceAnswer):
        return {
            "kind": "choice",
            "choice": answer.choice,
            "probabilities": dict(answer.probabilities),
            "confidence": answer.confidence,
        }
    if isinstance(answer, NoulAnswer):
        return {"kind": "noul", "probability": answer.probability}
    if isinstance(answer, ScoreAnswer):
        return {
            "kind": "score",
            "score": answer.score,
            "levels": list(answer.levels),
            "probabilities": list(answer.probabilities),
            "confidence": answer.confidence,
        }
    return {"kind": "refused", "reason": answer.reason}


def answer_of(data: Mapping[str, object]) -> Answer:
    """Read :func:`answer_json`'s shape back."""
    kind = data.get("kind")
    if kind == "choice":
        probabilities = data["probabilities"]
        assert isinstance(probabilities, Mapping)
        return ChoiceAnswer(
            str(data["choice"]),
            {str(k): float(v) for k, v in probabilities.items()},
            _float(data["confidence"]),
        )
    if kind == "noul":
        return NoulAnswer(_float(data["probability"]))
    if kind == "score":
        levels, probabilities = data["levels"], data["probabilities"]
        assert isinstance(levels, list)
        assert isinstance(probabilities, list)
        return ScoreAnswer(
            _float(data["score"]),
            tuple(str(x) for x in levels),
            tuple(float(x) for x in probabilities),
            _float(data["confidence"]),
        )
    if kind == "refused":
        reason = data.get("reason")
        return RefusedAnswer(reason if isinstance(reason, str) else None)
    raise ValueError(f"not an answer: kind {kind!r}")


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def call_json(call: ModelCall, body: object, reply: object = None) -> UncheckedJson:
    """One model call as the journal keeps it (and its wire body when the run keeps them)."""
    data: UncheckedJson = {
        "entry_id": call.entry_id,
        "provider": call.provider,
        "success": call.success,
        "answers": {qid: answer_json(a) for qid, a in call.answers.items()},
        "reason": call.reason,
        "input_tokens": call.input_tokens,
        "counted_input_tokens": call.counted_input_tokens,
        "latency": call.latency,
        "model": call.model,
        "request_id": call.request_id,
        "cost": call.cost,
        "output_tokens": call.output_tokens,
        "counted_by": call.counted_by,
    }
    return with_kept(data, call.reading, body, reply)


def call_of(data: Mapping[str, object]) -> tuple[ModelCall, object, object]:
    """Read :func:`call_json`'s shape back: the call, its body and reply (``None`` when not
    kept)."""
    answers = data.get("answers")
    assert isinstance(answers, Mapping)
    cost = data.get("cost")
    reading = data.get("reading")
    call = ModelCall(
        entry_id=str(data["entry_id"]),
        provider=str(data["provider"]),
        success=bool(data["success"]),
        answers={str(k): answer_of(v) for k, v in answers.items()},
        reason=_text_or_none(data.get("reason")),
        input_tokens=_int_or_none(data.get("input_tokens")),
        counted_input_tokens=_int_or_none(data.get("counted_input_tokens")),
        latency=_float(data["latency"]),
        model=_text_or_none(data.get("model")),
        request_id=_text_or_none(data.get("request_id")),
        cost=None if cost is None else _float(cost),
        output_tokens=_int_or_none(data.get("output_tokens")) or 0,
        counted_by=_text_or_none(data.get("counted_by")),
        reading=dict(reading) if isinstance(reading, Mapping) else None,
    )
    return call, data.get("body"), data.get("reply")


def response_json(response: DecisionResponse) -> UncheckedJson:
    """The answered response of a turn's decision (its request is rebuilt on replay)."""
    return {
        "answers": {qid: answer_json(a) for qid, a in response.answers.items()},
        "input_tokens": response.input_tokens,
        "model": response.model,
        "request_id": response.request_id,
        "latency": response.latency,
    }


def response_of(request: DecisionRequest, data: Mapping[str, object]) -> DecisionResponse:
    """Read :func:`response_json`'s shape back as the answer to ``request``."""
    answers = data["answers"]
    assert isinstance(answers, Mapping)
    return DecisionResponse(
        request=request,
        answers={str(k): answer_of(v) for k, v in answers.items()},
        input_tokens=_int_or_none(data.get("input_tokens")),
        model=_text_or_none(data.get("model")),
        request_id=_text_or_none(data.get("request_id")),
        latency=_float(data.get("latency", 0.0)),
    )


def class_path(cls: type) -> str:
    """``module:QualName`` of a class (what the journal names a class by)."""
    return f"{cls.__module__}:{cls.__qualname__}"


Classes = Mapping[str, type]
"""Classes by ``module:QualName``, found before importing (see :func:`known_classes`)."""


def known_classes(roots: Sequence[object]) -> dict[str, type]:
    """The artifact classes ``roots`` name (classes or parameterised lists, their parameters)
    and all their subclasses, by ``module:QualName``: the classes a run's products can be of,
    found without importing (a class made at run time, or in ``__main__``, included)."""
    found: dict[str, type] = {}
    stack = list(roots)
    while stack:
        tp = stack.pop()
        stack.extend(get_args(tp))
        origin = get_origin(tp) or tp
        if isinstance(origin, type) and class_path(origin) not in found:
            found[class_path(origin)] = origin
            stack.extend(origin.__subclasses__())
    return found


def import_class(path: str, classes: Classes | None = None) -> type:
    """The class ``module:QualName`` names (from ``classes`` first, else imported by the one
    importer, :func:`~harness.runs.import_object`: a mistake is a :class:`TargetError` row)."""
    if classes is not None and path in classes:
        return classes[path]
    found = import_object(
        path, check=lambda value: isinstance(value, type), what="a class", candidates=False
    )
    assert isinstance(found, type)
    return found


def type_spec(tp: object) -> UncheckedJson:
    """An artifact type as JSON: its class, and its parameters (``ListArtifact[Note]``)."""
    origin = get_origin(tp) or tp
    assert isinstance(origin, type)
    return {"class": class_path(origin), "args": [type_spec(a) for a in get_args(tp)]}


def type_of(spec: Mapping[str, object], classes: Classes | None = None) -> Any:  # an alias
    """Read :func:`type_spec`'s shape back (a class, or a parameterised alias)."""
    cls: Any = import_class(str(spec["class"]), classes)
    args = [type_of(a, classes) for a in spec.get("args") or ()]  # type: ignore[attr-defined]  # a JSON list
    if args:
        return cls[tuple(args)] if len(args) > 1 else cls[args[0]]
    return cls


def product_json(product: Artifact) -> UncheckedJson:
    """A tool's product as typed data: its class and its cattrs form (a list: its iterand type
    and each item's own)."""
    if isinstance(product, ListArtifact):
        return {
            "list": type_spec(product.iterand_type),
            "items": [product_json(item) for item in product.iterands],
            "instruction": product.instruction,
        }
    return {"class": class_path(type(product)), "value": artifact_converter.unstructure(product)}


def product_of(data: Mapping[str, object], classes: Classes | None = None) -> Artifact:
    """Read :func:`product_json`'s shape back (classes from ``classes`` first)."""
    spec = data.get("list")
    if isinstance(spec, Mapping):
        items = data.get("items")
        assert isinstance(items, list)
        instruction = data.get("instruction")
        return ListArtifact(
            type_of(spec, classes),
            tuple(product_of(item, classes) for item in items),
            instruction if isinstance(instruction, str) else None,
        )
    cls = import_class(str(data["class"]), classes)
    if not issubclass(cls, Artifact):
        raise TypeError(f"{data['class']} is not an Artifact class")
    return artifact_converter.structure(data.get("value"), cls)


def type_name(tp: object) -> str:
    """A stable name for an artifact type (a class, or a parameterised ``ListArtifact``)."""
    args: Sequence[object] = getattr(tp, "__args__", ())
    origin = getattr(tp, "__origin__", tp)
    name = getattr(origin, "__qualname__", repr(origin))
    alias = getattr(origin, "alias", None)
    shown = f"{name}({alias})" if isinstance(alias, str) else str(name)
    if args:
        return shown + "[" + ", ".join(type_name(a) for a in args) + "]"
    return shown
