"""COPY text is what PostgreSQL's text format reads back as the same values (the writes
themselves are tested against PostgreSQL in test_upserting.py)."""

from __future__ import annotations

import datetime

import peewee

from lens.store import copying, models

NAME = peewee.CharField()
COUNT = peewee.IntegerField()
RATIO = peewee.DoubleField()


def test_rows_become_tab_separated_lines_with_nulls_and_escapes() -> None:
    text = copying.copy_text(
        [NAME, COUNT, RATIO],
        [("a\tb", 1, 0.5), ("back\\slash\nline", None, None), ("plain", 3, 2.0)],
    )
    assert text == "a\\tb\t1\t0.5\nback\\\\slash\\nline\t\\N\t\\N\nplain\t3\t2.0\n"


def test_times_are_written_once_per_distinct_value_in_utc() -> None:
    when = datetime.datetime(2026, 11, 24, 12, 0, 1, 500000, tzinfo=datetime.UTC)
    text = copying.copy_text([models.Node.created_at], [(when,), (when,)])
    assert text == "2026-11-24 12:00:01.500000\n" * 2


def test_a_value_without_a_plain_text_form_is_not_copied() -> None:
    assert copying.copy_text([peewee.Field()], [(1j,)]) is None
