"""The layer checker fails on an upward import planted each way, on a planted reach-in, and
on a planted import circle.

Each test writes a small ``harness`` tree in a temporary folder (a low package ``decision``, a
high package ``thinker`` with a private module) and runs the checker of ``tests/api/layers.py``
over it with the real LAYERS.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api import layers
from tests.api.test_layers import ALLOWED_UPWARD, LAYERS


def tree(tmp_path: Path, planted: str) -> Path:
    """A ``harness`` tree whose ``decision/_planted.py`` holds ``planted``."""
    root = tmp_path / "harness"
    for folder in ("decision", "thinker"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text('"""A package."""\n', encoding="utf-8")
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "thinker" / "_turn.py").write_text("TURN = 1\n", encoding="utf-8")
    (root / "decision" / "_planted.py").write_text(planted, encoding="utf-8")
    return root


PLANTED = {
    "import": "from harness.thinker import TURN\n",
    "plain import": "import harness.thinker\n",
    "function": "def later() -> object:\n    from harness.thinker import TURN\n    return TURN\n",
    "method": (
        "class Late:\n    def now(self) -> object:\n        import harness.thinker\n"
        "        return harness.thinker\n"
    ),
    "importlib": (
        "import importlib\n\ndef later() -> object:\n"
        '    return importlib.import_module("harness.thinker")\n'
    ),
    "from importlib": (
        'from importlib import import_module\n\nTHINKER = import_module("harness.thinker")\n'
    ),
    "__import__": '\ndef later() -> object:\n    return __import__("harness.thinker")\n',
    "string": 'LAZY = {"DecisionThinker": "harness.thinker"}\n',
    "target string": 'TARGET = "harness.thinker:DecisionThinker"\n',
    "relative": "from ..thinker import TURN\n",
}
KIND = {
    "import": "import",
    "plain import": "import",
    "function": "function",
    "method": "function",
    "importlib": "importlib",
    "from importlib": "importlib",
    "__import__": "__import__",
    "string": "string",
    "target string": "string",
    "relative": "import",
}


@pytest.mark.parametrize("way", sorted(PLANTED))
def test_an_upward_import_written_each_way_fails(tmp_path: Path, way: str) -> None:
    root = tree(tmp_path, PLANTED[way])
    found = layers.upward(root, LAYERS, ALLOWED_UPWARD)
    assert found, f"the checker missed an upward import written as {way}"
    assert {v.path for v in found} == {"harness/decision/_planted.py"}
    assert {v.kind for v in found} == {KIND[way]}
    assert all(v.module.startswith("harness.thinker") for v in found)


def test_a_clean_low_package_passes(tmp_path: Path) -> None:
    planted = (
        '"""Mentions harness.thinker in its docstring, which imports nothing."""\n\n'
        "import importlib\n\n"
        'LOGGER = "harness.decision"\n'
        'ATTRIBUTE = "harness.thinker.turns"  # a telemetry name, not a module\n'
        "def later(name: str) -> object:\n"
        '    """Or here: harness.thinker."""\n'
        "    return importlib.import_module(name)\n"
    )
    assert layers.upward(tree(tmp_path, planted), LAYERS, ALLOWED_UPWARD) == []


def test_an_allowed_pair_is_not_reported(tmp_path: Path) -> None:
    root = tree(tmp_path, PLANTED["import"])
    assert layers.upward(root, LAYERS, {("decision", "thinker")}) == []


@pytest.mark.parametrize(
    "planted",
    [
        "from harness.thinker._turn import TURN\n",
        "from harness.thinker import _turn\n",
        "def later() -> object:\n    import harness.thinker._turn\n    return harness.thinker\n",
        'MODULE = "harness.thinker._turn"\n',
    ],
)
def test_a_reach_into_a_private_module_is_counted(tmp_path: Path, planted: str) -> None:
    root = tree(tmp_path, planted)
    found = layers.reach_ins(root)
    assert list(found) == [("harness/decision/_planted.py", "harness.thinker._turn")]


def test_a_package_may_use_its_own_private_modules(tmp_path: Path) -> None:
    root = tree(tmp_path, "X = 1\n")
    (root / "thinker" / "_loop.py").write_text(
        "from harness.thinker._turn import TURN\n", encoding="utf-8"
    )
    assert layers.reach_ins(root) == {}


CIRCLES = {
    "module level": (
        "from harness.thinker._b import B\nA = 1\n",
        "from harness.thinker._a import A\nB = 2\n",
    ),
    "type checking": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from harness.thinker._b import B\nA = 1\n",
        "from harness.thinker._a import A\nB = 2\n",
    ),
    "in a function": (
        "def later() -> object:\n    from harness.thinker._b import B\n    return B\nA = 1\n",
        "from harness.thinker._a import A\nB = 2\n",
    ),
    "relative": ("from ._b import B\nA = 1\n", "from . import _a\nB = 2\n"),
    "through the face": (
        "from harness.thinker import B\nA = 1\n",
        "from harness.thinker._a import A\nB = 2\n",
    ),
}


@pytest.mark.parametrize("way", sorted(CIRCLES))
def test_a_planted_import_circle_is_found(tmp_path: Path, way: str) -> None:
    root = tree(tmp_path, "X = 1\n")
    a, b = CIRCLES[way]
    (root / "thinker" / "_a.py").write_text(a, encoding="utf-8")
    (root / "thinker" / "_b.py").write_text(b, encoding="utf-8")
    expected: list[tuple[str, ...]]
    if way == "through the face":  # the face imports _b; _a takes B from the face
        (root / "thinker" / "__init__.py").write_text(
            "from harness.thinker._b import B as B\n", encoding="utf-8"
        )
        expected = [("harness.thinker", "harness.thinker._a", "harness.thinker._b")]
    else:
        expected = [("harness.thinker._a", "harness.thinker._b")]
    assert layers.circles(root) == expected


def test_modules_importing_one_way_make_no_circle(tmp_path: Path) -> None:
    root = tree(tmp_path, "from harness.thinker import _turn\n")
    (root / "thinker" / "__init__.py").write_text(
        "from harness.thinker._a import A as A\nfrom harness.thinker._turn import TURN as TURN\n",
        encoding="utf-8",
    )
    (root / "thinker" / "_a.py").write_text(
        "from harness.thinker import _turn\nfrom harness.thinker._turn import TURN\nA = TURN\n",
        encoding="utf-8",
    )
    assert layers.circles(root) == []
