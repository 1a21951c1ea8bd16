"""Telemetry intake (issue: remote-write and training logs): Prometheus remote-write decoding,
enrichment with pod and workload labels and forwarding (`remote_write.py`, pure decode and
validation), training-log parsers and training metrics. `lens jobs` serves the intake
endpoints; writes are batched into the store.
"""

__all__: list[str] = []
