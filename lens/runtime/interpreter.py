"""The interpreter set up for a long-running role that allocates at a high rate and hands work
between threads: the garbage collector and the GIL's switch interval.

The event server makes and drops millions of short-lived objects (decoded records, rows); they
are freed by reference counting, yet each 700 allocations start a young-generation collection,
and every collection of the oldest generation walks all the objects start-up made. Its writer
thread comes back from every database round trip needing the GIL while the event loop stages
the next batch; with CPython's 5 ms switch interval each return can wait that long. Both
measured with bench/bench_events.py (PERFORMANCE.md).
"""

from __future__ import annotations

import gc
import sys

# Allocations between young-generation collections (CPython's default is 700).
YOUNG_THRESHOLD = 20_000
# Seconds a thread holds the GIL while another waits for it (CPython's default is 0.005).
SWITCH_INTERVAL = 0.0002


def tune_for_throughput(
    young_threshold: int = YOUNG_THRESHOLD, switch_interval: float = SWITCH_INTERVAL
) -> None:
    """Leave what start-up made out of every later collection, collect the young less often, and
    hand the GIL over sooner.

    Call once the role is built: the objects alive then (modules, configuration, the role's own
    objects) live as long as the process."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
    sys.setswitchinterval(switch_interval)
