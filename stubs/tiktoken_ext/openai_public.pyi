# tiktoken's encoding constructors, which the tokenizer tests compare harness's offline build with.
from collections.abc import Callable
from typing import Any

# each constructor returns tiktoken.Encoding's keyword arguments
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]]
