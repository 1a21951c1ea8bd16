"""Python's cyclic garbage collector set up for a long-running role that allocates at a high rate.

The event server makes and drops millions of short-lived objects (decoded records, rows); they
are freed by reference counting, yet each 700 allocations start a young-generation collection,
and every collection of the oldest generation walks all the objects start-up made. Measured with
bench/bench_events.py: about a fifth of the server's CPU per event (PERFORMANCE.md).
"""

from __future__ import annotations

import gc

# Allocations between young-generation collections (CPython's default is 700).
YOUNG_THRESHOLD = 20_000


def tune_for_throughput(young_threshold: int = YOUNG_THRESHOLD) -> None:
    """Leave what start-up made out of every later collection, and collect the young less often.

    Call once the role is built: the objects alive then (modules, configuration, the role's own
    objects) live as long as the process."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
