"""What changed between two versions of a device's facts, named field by field: what
storing/devices.py writes in an UPDATE row of node_device_changelog.

Pure: two mappings in, names out. A value that is itself a mapping on both sides (an RDMA
device's ports by number) is compared key by key, so one port going down is named as such.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

SEPARATOR = "; "
_CUT = "..."


def changes(old: Mapping[str, object], new: Mapping[str, object]) -> tuple[str, ...]:
    """Each field whose value differs, as `name: old -> new` with the values as JSON (a missing
    field is null); new's fields first, in its order, then those only old has.

    Where both values are mappings, their keys are compared instead: `ports[1].state` is key 1
    of `ports`, then key `state` of that (an int key in brackets, a text key after a dot).
    """
    return tuple(_changes("", old, new))


def _changes(prefix: str, old: Mapping[Any, object], new: Mapping[Any, object]) -> Iterator[str]:
    keys = [*new, *(key for key in old if key not in new)]
    for key in keys:
        name = _name(prefix, key)
        before, after = old.get(key), new.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            yield from _changes(name, before, after)
        elif before != after:
            yield f"{name}: {render(before)} -> {render(after)}"


def _name(prefix: str, key: object) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else str(key)


def render(value: object) -> str:
    """`value` as compact JSON in ASCII (a tuple as a list, anything else JSON lacks as text)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)


def summary(names: Sequence[str], limit: int) -> str:
    """The changes joined by SEPARATOR, cut to `limit` characters ("..." ends a cut one)."""
    joined = SEPARATOR.join(names)
    if len(joined) <= limit:
        return joined
    if limit < len(_CUT):
        return joined[:limit]
    return joined[: max(0, limit - len(_CUT))] + _CUT
