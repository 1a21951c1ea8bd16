"""What the workload enrichment of remote-write series is told: which cluster's rows, how many
pods it keeps and for how long, how it reads changes, and which labels it writes.

The jobs role makes one from its config section and hands it to loading.py and relabeling.py.
"""

from __future__ import annotations

import dataclasses
import re

from lens.runtime import errors

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EnrichmentSettings:
    """Parameters of the enrichment index and of the labels it adds."""

    cluster: str = "default"  # the rows' cluster column
    max_pods: int = 50_000  # pods the index keeps at most; the ones past it are evicted
    ended_grace_seconds: float = 300.0  # an ended pod still names its GPUs this long
    overlap_seconds: float = 120.0  # each read goes back this far: writers stamp rows late
    # And this often the rows of every pod indexed as live, and their containers, are read again
    # whatever their stamps: an end written later than the overlap (a controller catching up
    # after a restart stamps it with the pod's own finish time) is not missed for good.
    recheck_seconds: float = 60.0
    team_label: str = "team"  # the label the team is written in ('' none)
    team_label_key: str = "team"  # the top-level workload's label holding it (jobs.team_label)
    # The original's output instead (REFERENCE.md 10.1): __name__ workload_<name> with pod_name,
    # pod_uid, workload_name and workload_uid, once per series for its top-level workload.
    rename_like_original: bool = False

    def __post_init__(self) -> None:
        if self.max_pods < 1:
            _refuse("max_pods", "at least 1")
        if not 0 <= self.ended_grace_seconds <= 86_400:
            _refuse("ended_grace_seconds", "from 0 to 86400 seconds")
        if not 0 <= self.overlap_seconds <= 86_400:
            _refuse("overlap_seconds", "from 0 to 86400 seconds")
        if not 1 <= self.recheck_seconds <= 86_400:
            _refuse("recheck_seconds", "from 1 to 86400 seconds")
        if self.team_label and (
            not _LABEL_NAME.fullmatch(self.team_label) or self.team_label.startswith("__")
        ):
            _refuse("team_label", "a Prometheus label name not starting with __, or empty")
        if len(self.team_label_key) > 128 or self.team_label_key.strip() != self.team_label_key:
            _refuse("team_label_key", "a label key of at most 128 characters, or empty")


def _refuse(key: str, expected: str) -> None:
    raise errors.ConfigError(source="enrichment settings", key=key, expected=expected)
