"""Reading references into a 2.0 symbol table and building one."""

from __future__ import annotations

import pytest

from lens.telemetry.remotewrite import symbols
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest
from tests.telemetry.remotewrite.reference import GpuRelabeler

TABLE = ["", "__name__", "up", "gpu", "0"]


def test_references_resolve_to_their_strings() -> None:
    assert symbols.resolved(TABLE, [1, 2, 3, 4], what="a series") == ("__name__", "up", "gpu", "0")
    assert list(symbols.pairs(("a", "1", "b", "2"))) == [("a", "1"), ("b", "2")]


def test_bad_references_say_what_held_them() -> None:
    with pytest.raises(BadRequest, match="a series has an odd number of label references"):
        symbols.resolved(TABLE, [1, 2, 3], what="a series")
    with pytest.raises(BadRequest, match="an exemplar refers to symbol 5, past the table of 5"):
        symbols.resolved(TABLE, [1, 5], what="an exemplar")


def test_a_table_starts_empty_and_holds_each_string_once() -> None:
    table = symbols.Table()
    assert table.refs([("gpu", "0"), ("job", "gpu")]) == [1, 2, 3, 1]
    assert table.ref("") == 0 and table.ref("0") == 2
    assert table.strings == ["", "gpu", "0", "job"]


def test_relabelling_goes_through_the_cache() -> None:
    relabeler = GpuRelabeler(extra=(("pod", "p"),))
    cache: LabelCache[symbols.Flat, symbols.Entry] = LabelCache(relabeler, max_entries=8)
    expected = ((("gpu", "0"), ("pod", "p")), True)
    assert symbols.Relabelling(cache, relabeler).entry(("gpu", "0")) == expected
    assert symbols.Relabelling(cache, relabeler).entry(("gpu", "0")) == expected
    assert relabeler.calls == 1
