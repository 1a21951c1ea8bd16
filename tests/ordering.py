"""The order test files start in: the longest first, so that the short tests run beside them
and not after them. Run last, the ground truth file alone once kept one worker busy ten minutes
after the other had finished. scripts/test keeps this order
(--no-loadscope-reorder; xdist otherwise starts the files with the most tests first).
"""

from __future__ import annotations

# Longest first; on 2026-11-28's host the ground truth's two replays took about 7 minutes each
# alone (11 side by side, in two files on two workers: split, they only slowed each other), the
# reports pipeline 2, the others a minute or less.
LONGEST_FIRST = (
    "tests/roles/jobs/test_ground_truth.py",
    "tests/roles/node_agent/test_reports_pipeline.py",
    "tests/roles/demo/test_main.py",
    "tests/roles/api/test_dashboard.py",
)
_RANKS = {path: place for place, path in enumerate(LONGEST_FIRST)}


def rank(nodeid: str) -> int:
    """Where the test `nodeid` starts: its file's place in LONGEST_FIRST, or after them all."""
    return _RANKS.get(nodeid.split("::")[0], len(_RANKS))
