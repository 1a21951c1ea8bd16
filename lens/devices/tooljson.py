"""The JSON that host tools print (amd-smi, rocm-smi, `rdma -j`), decoded leniently.

amdsmi.py and rdmatool.py parse with these: `document()` turns any text into a JSON value or a
SourceError (malformed, too deeply nested, a number with too many digits), and the leaf helpers
turn any value into what a field may hold, or None: one bad field leaves that field unknown,
never the whole tool's output. Text is cleaned so it can always become a label (no lone
surrogates from `\\ud800` escapes, no NULs); integers are kept within 64 bits and floats finite,
so every value renders.
"""

from __future__ import annotations

import math
from typing import Any

from lens.runtime import errors, jsontext

LOWEST = -(2**63)  # the kernel and the tools print at most s64 ...
HIGHEST = 2**64 - 1  # ... and u64 values
TEXT_LIMIT = 1024  # longer than any name, version or serial a tool prints


def document(text: str, tool: str) -> Any:
    """The JSON value that `text` is; SourceError naming `tool` when it is none."""
    try:
        return jsontext.loads(text)
    except jsontext.JsonError as exc:
        raise errors.SourceError(f"{tool} printed {exc}") from exc


def clean(value: str) -> str:
    """`value` safe to encode and to put in a label: lone surrogates replaced, NULs dropped,
    cut to TEXT_LIMIT characters."""
    return value.encode(errors="replace").decode().replace("\0", "")[:TEXT_LIMIT]


def text(value: object) -> str | None:
    """A string field (numbers as the tool wrote them); None when blank or not a scalar."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    cleaned = clean(str(value)).strip()
    return cleaned or None


def integer(value: object, *, lowest: int = LOWEST, highest: int = HIGHEST) -> int | None:
    """An integer field: an int, a whole float, or a string's first word ("42", "0x1002",
    "42 MB"); None when it is none of these or lies outside [lowest, highest]."""
    number: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        number = _from_text(value)
    if number is None or not lowest <= number <= highest:
        return None
    return number


def _from_text(value: str) -> int | None:
    words = value.split(maxsplit=1)
    if not words or len(words[0]) > 40:  # no 64-bit number has more digits
        return None
    try:
        return int(words[0], 0)
    except ValueError:
        return None


def mapping(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
