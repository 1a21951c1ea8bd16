"""show(): once or watching, as a table or JSON lines."""

from __future__ import annotations

import io
import json
import threading

from rich.console import Console

from lens.roles.diagnostics.showing import Diagnostic, show


def _diagnostic(stop: threading.Event, reads: list[int], until: int) -> Diagnostic[int]:
    def read() -> int:
        reads.append(len(reads))
        if len(reads) >= until:
            stop.set()
        return reads[-1]

    return Diagnostic(
        read=read, table=lambda n: f"table {n}", to_json=lambda n: {"n": n}, empty=lambda n: n < 0
    )


def test_once_as_a_table() -> None:
    console = Console(file=io.StringIO(), width=80)
    reads: list[int] = []
    assert show(
        _diagnostic(threading.Event(), reads, 99),
        console=console,
        as_json=False,
        watch=False,
        interval=1,
    )
    assert console.file.getvalue() == "table 0\n" and reads == [0]


def test_watching_json_prints_one_line_per_read() -> None:
    console, stop, reads = Console(file=io.StringIO()), threading.Event(), []
    assert show(
        _diagnostic(stop, reads, 3),
        console=console,
        as_json=True,
        watch=True,
        interval=0.01,
        stop=stop,
    )
    lines = console.file.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_watching_a_table_redraws_it() -> None:
    console, stop, reads = Console(file=io.StringIO(), width=80), threading.Event(), []
    show(
        _diagnostic(stop, reads, 3),
        console=console,
        as_json=False,
        watch=True,
        interval=0.01,
        stop=stop,
    )
    assert reads == [0, 1, 2] and "table 2" in console.file.getvalue()


def test_an_empty_report_says_so() -> None:
    diagnostic = Diagnostic(read=lambda: -1, table=str, to_json=lambda n: n, empty=lambda n: n < 0)
    assert not show(
        diagnostic, console=Console(file=io.StringIO()), as_json=True, watch=False, interval=1
    )
