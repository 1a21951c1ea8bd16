"""The `telemetry` config section: what `lens jobs` takes in on its HTTP port — Prometheus remote
write, enriched with workloads and forwarded, and training logs."""

from __future__ import annotations

import dataclasses

from lens.runtime.settings import setting


def _check_forward_url(value: object) -> str | None:
    if value == "" or (isinstance(value, str) and value.startswith(("http://", "https://"))):
        return None
    return "expected an http:// or https:// remote-write URL, or empty"


def _check_protocol(value: object) -> str | None:
    return None if value in ("1.0", "2.0") else "expected 1.0 or 2.0"


def _check_label_name(value: object) -> str | None:
    if value == "":
        return None
    if (
        isinstance(value, str)
        and value.isascii()
        and (value[0].isalpha() or value[0] == "_")
        and all(c.isalnum() or c == "_" for c in value)
        and not value.startswith("__")
    ):
        return None
    return "expected a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryConfig:
    """Remote write and training logs into `lens jobs` (docs/telemetry.md)."""

    token_file: str = setting(
        "",
        "File holding the bearer token every sender to the intake's routes must present "
        "(Authorization: Bearer; re-read when it changes); empty: none asked for.",
        path=True,
    )
    remote_write_url: str = setting(
        "",
        "Remote-write endpoint the enriched series are forwarded to (Prometheus with "
        "--web.enable-remote-write-receiver, Mimir, VictoriaMetrics...); empty: lens jobs does "
        "not take remote write (POST /v1/prometheus and /api/v1/write answer 404).",
        check=_check_forward_url,
    )
    remote_write_protocol: str = setting(
        "1.0",
        "Remote-write protocol spoken to remote_write_url: 1.0 or 2.0 (the target must accept "
        "io.prometheus.write.v2.Request).",
        check=_check_protocol,
    )
    remote_write_bearer_token_file: str = setting(
        "",
        "File holding a bearer token sent to remote_write_url (re-read when it changes); empty: "
        "none.",
        path=True,
    )
    remote_write_timeout_seconds: float = setting(
        10.0, "Timeout of one forwarded request.", minimum=0.1, maximum=300.0
    )
    remote_write_queue_requests: int = setting(
        256,
        "Received requests waiting to be forwarded; beyond, a sender is answered 503 and "
        "retries (Prometheus keeps its samples meanwhile).",
        minimum=1,
        maximum=100_000,
    )
    remote_write_max_samples_per_send: int = setting(
        4000,
        "Queued requests are joined into one forwarded request of at most this many samples "
        "(1.0 only: 2.0's symbol tables cannot be joined).",
        minimum=1,
        maximum=1_000_000,
    )
    remote_write_give_up_seconds: float = setting(
        300.0,
        "How long a forwarded request is retried (5xx, 429, no connection) before it is "
        "dropped and counted.",
        minimum=1.0,
        maximum=86_400.0,
    )
    team_label_name: str = setting(
        "team",
        "Label added to an enriched series with its workload's team (the value of the "
        "workload's jobs.team_label label); empty: none.",
        check=_check_label_name,
    )
    rename_like_original: bool = setting(
        False,
        "Also rename enriched series as the original did: __name__ workload_<name> with "
        "labels pod_name, pod_uid, workload_name and workload_uid.",
    )
    enrichment_refresh_seconds: float = setting(
        5.0,
        "How often the index of pods and GPUs reads what changed in the database.",
        minimum=0.5,
        maximum=3600.0,
    )
    enrichment_max_pods: int = setting(
        200_000, "Pods the enrichment index holds at most.", minimum=100, maximum=10_000_000
    )
    enrichment_ended_grace_seconds: float = setting(
        300.0,
        "How long an ended pod still enriches late samples of its GPUs.",
        minimum=0.0,
        maximum=86_400.0,
    )
    logs_enabled: bool = setting(
        True, "Take training logs at POST /v1/logs (fluent-bit and Vector records)."
    )
    logs_queue_records: int = setting(
        100_000,
        "Log records waiting to be stored; beyond, a sender is answered 503 and retries.",
        minimum=100,
        maximum=10_000_000,
    )
    straggler_share: float = setting(
        0.10,
        "A rank or node is a straggler when its iteration time stays more than this share "
        "above its job's median.",
        minimum=0.01,
        maximum=10.0,
    )
    straggler_intervals: int = setting(
        3,
        "Consecutive intervals above (or back under) the share that flag (or clear) a straggler.",
        minimum=1,
        maximum=1000,
    )
    straggler_interval_seconds: float = setting(
        60.0, "Length of one straggler interval.", minimum=5.0, maximum=3600.0
    )
