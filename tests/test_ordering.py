from __future__ import annotations

from pathlib import Path

from tests import ordering

REPO = Path(__file__).resolve().parents[1]


def test_the_longest_files_are_files_that_exist() -> None:
    # A file renamed or split would silently fall back to the end of the run.
    missing = [path for path in ordering.LONGEST_FIRST if not (REPO / path).is_file()]
    assert missing == []


def test_the_longest_files_go_first_in_their_order_and_the_others_keep_theirs() -> None:
    others = ["tests/a/test_x.py::test_one", "tests/b/test_y.py::test_two[sqlite]"]
    longest = [f"{path}::test_it[postgresql]" for path in reversed(ordering.LONGEST_FIRST)]
    ordered = sorted(others + longest, key=ordering.rank)
    assert ordered == [f"{path}::test_it[postgresql]" for path in ordering.LONGEST_FIRST] + others
