"""Strings of a 2.0 request: reading references into its symbol table, building the table of a
request being written, and relabelling label sets read through the protobuf classes with the
shared cache (v2.py reads and writes 2.0 with these)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lens.telemetry.remotewrite import labels
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest, Labels, Relabeler

Flat = tuple[str, ...]
"""A label set as received: name, value, name, value, ..."""
Entry = tuple[Labels, bool]
"""A cached answer: the series' labels to send, and whether the Relabeler changed them."""


def resolved(table: Sequence[str], refs: Sequence[int], *, what: str) -> Flat:
    """The strings `refs` point to in a received symbol `table`; BadRequest for an odd count
    of label references or one past the table."""
    if len(refs) % 2:
        raise BadRequest(f"{what} has an odd number of label references ({len(refs)})")
    return tuple(string(table, ref, what=what) for ref in refs)


def string(table: Sequence[str], ref: int, *, what: str) -> str:
    """The string `ref` points to in a received symbol `table`."""
    if ref >= len(table):
        raise BadRequest(f"{what} refers to symbol {ref}, past the table of {len(table)}")
    return table[ref]


def pairs(flat: Flat) -> Iterable[tuple[str, str]]:
    """(name, value) pairs of a flat label list."""
    return zip(flat[::2], flat[1::2], strict=True)


class Table:
    """The symbol table of a 2.0 request being written: the empty string first, as the spec
    requires, then every other string once, in order of first use."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {"": 0}
        self.strings: list[str] = [""]

    def ref(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.strings)
            self.strings.append(text)
        return index

    def refs(self, label_set: Iterable[tuple[str, str]]) -> list[int]:
        """References to the names and values of `label_set`, name before value."""
        return [self.ref(text) for pair in label_set for text in pair]


class Relabelling:
    """Relabelled label sets of one request, through the process-wide cache."""

    def __init__(self, cache: LabelCache[Flat, Entry], relabeler: Relabeler) -> None:
        self._cache = cache
        self._young = cache.begin()
        self._relabeler = relabeler

    def entry(self, flat: Flat) -> Entry:
        found = self._young.get(flat)
        return found if found is not None else self._cache.fill(flat, self._computed)

    def _computed(self, flat: Flat) -> Entry:
        return labels.relabelled(pairs(flat), self._relabeler)
