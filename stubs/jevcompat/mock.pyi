# The part of jevcompat's reference mock the interop and codec tests use.
import random
import threading
from types import TracebackType
from typing import Any

FAULTS: dict[str, str]

class MockConfig:
    key: str | None
    faults: frozenset[str]
    noise: float
    sampled: bool
    busy_every: int
    rng: random.Random
    lock: threading.Lock
    requests: int
    def __init__(
        self,
        key: str | None = None,
        faults: frozenset[str] = ...,
        noise: float = 0.0,
        sampled: bool = False,
        busy_every: int = 0,
        rng: random.Random = ...,
        lock: threading.Lock = ...,
        requests: int = 0,
    ) -> None: ...

# request and reply bodies are any JSON
def respond(cfg: MockConfig, body: dict[str, Any]) -> dict[str, Any]: ...
def validate_request(body: object, cfg: MockConfig) -> list[dict[str, Any]]: ...

class Running:
    url: str
    def __init__(self, cfg: MockConfig | None = None) -> None: ...
    def __enter__(self) -> Running: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
