"""JSON from outside Lens (tools, the kubelet, Docker, OCI specs) read without a foreign exception.

`json.loads` raises JSONDecodeError, UnicodeDecodeError, RecursionError (nesting too deep) or a
bare ValueError (an integer of more than 4,300 digits, CPython's limit); a parser of untrusted
input must turn each into a Lens error. Callers prefix the reason with whose text it was.
"""

from __future__ import annotations

import json

from lens.runtime import errors


class JsonError(errors.SourceError):
    """Text that is no JSON value; the message says why ("malformed JSON: ...", "JSON nested too
    deeply", "a number too long to read", "not UTF-8")."""


def loads(data: str | bytes) -> object:
    """The JSON value of `data`; JsonError when it is none."""
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise JsonError(f"malformed JSON: {exc.msg} at character {exc.pos}") from exc
    except UnicodeDecodeError as exc:
        raise JsonError("not UTF-8") from exc
    except RecursionError as exc:
        raise JsonError("JSON nested too deeply") from exc
    except ValueError as exc:
        raise JsonError("a number too long to read") from exc
