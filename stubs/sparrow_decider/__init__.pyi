# The part of sparrow-decider (the embedded model) harness uses.
from typing import Any

DEFAULT_MODEL: str

def available_models() -> list[str]: ...

class Decider:
    name: str
    @classmethod
    def load(cls, path: str | None = None) -> Decider: ...
    # wire-shaped answers: System One JSON, whose values are any JSON
    def ask(self, state: object, questions: dict[str, dict[str, Any]]) -> dict[str, Any]: ...
