"""The `jobs` config section: the event server of `lens jobs` and its device reports' upkeep."""

from __future__ import annotations

import dataclasses
from typing import Literal

from lens.runtime.config.kube import check_object_ref
from lens.runtime.settings import setting


def _check_local_time(value: object) -> str | None:
    if value == "":
        return None
    if isinstance(value, str) and len(value) == 5 and value[2] == ":":
        hours, minutes = value[:2], value[3:]
        if hours.isdigit() and minutes.isdigit() and int(hours) < 24 and int(minutes) < 60:
            return None
    return "expected a local time HH:MM (24-hour clock), or empty"


def _check_label_key(value: object) -> str | None:
    if isinstance(value, str) and len(value) <= 128 and value.strip() == value:
        return None
    return "expected a label key of at most 128 characters, or empty"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JobsConfig:
    """The jobs role: its gRPC event server."""

    grpc_host: str = setting("0.0.0.0", "Address the event server listens on.")
    grpc_port: int = setting(8991, "Port of the event server.", minimum=0, maximum=65535)
    tls_cert_file: str = setting(
        "", "Server certificate (PEM); with tls_key_file turns TLS on.", path=True
    )
    tls_key_file: str = setting("", "Private key of tls_cert_file (PEM).", path=True)
    token_file: str = setting(
        "",
        "File holding the bearer token agents must send; empty: no token required.",
        path=True,
    )
    batch_records: int = setting(
        5000,
        "Most events written in one transaction (batches waiting together are merged).",
        minimum=1,
        maximum=100_000,
    )
    lease: str = setting(
        "",
        "The coordination.k8s.io Lease (NAMESPACE/NAME) that elects the one replica running "
        "the periodic jobs (rollups, retention; the event server serves on every replica); "
        "empty: this replica runs them, for a single replica.",
        check=check_object_ref,
    )
    lease_duration_seconds: float = setting(
        15.0,
        "How long the jobs Lease holds without renewal; a new leader takes over within it.",
        minimum=1,
        maximum=3600,
    )
    identity: str = setting(
        "", "This replica's name in the jobs Lease (the pod name); empty uses the host name."
    )
    reports_minutes_retention_days: float = setting(
        8.0,
        "Days GPU- and RDMA port-minutes are kept (gpu_minutes, gpu_minute_holders, "
        "rdma_port_minutes).",
        minimum=1.0,
        maximum=3650.0,
    )
    reports_hours_retention_days: float = setting(
        400.0,
        "Days the hourly rollups are kept (gpu_hours, gpu_hour_holders).",
        minimum=1.0,
        maximum=36500.0,
    )
    reports_rollup_interval_seconds: float = setting(
        60.0,
        "How often hours with new or late minutes are rolled up again.",
        minimum=1.0,
        maximum=3600.0,
    )
    reports_retention_interval_seconds: float = setting(
        3600.0,
        "How often expired minutes and hours are deleted (in bounded batches).",
        minimum=10.0,
        maximum=86400.0,
    )
    retention_interval_seconds: float = setting(
        3600.0,
        "How often expired events, snapshots and changelog rows are deleted (by the leader, "
        "in bounded batches).",
        minimum=10.0,
        maximum=86400.0,
    )
    events_retention_days: float = setting(
        90.0,
        "Days container, pod and workload events are kept (node_container_events, "
        "gpu_pods_events, workload_events); 0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    snapshots_retention_days: float = setting(
        30.0,
        "Days pod and workload snapshots are kept (pod_snapshots, gpu_workload_snapshots); "
        "0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    changelog_retention_days: float = setting(
        400.0,
        "Days device changelog rows are kept (node_device_changelog); 0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    training_retention_days: float = setting(
        400.0,
        "Days training performance rows are kept (training_performance); 0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    event_streams_retention_days: float = setting(
        30.0,
        "Days an agent boot's stream position is kept after its last batch (event_streams); "
        "a boot silent longer that comes back resends its journal, and nothing is doubled; "
        "0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    idle_utilization_floor: float = setting(
        0.05,
        "A held GPU whose utilization (ratio, 0-1) stays under this for idle_window_minutes "
        "is idle.",
        minimum=0.0,
        maximum=1.0,
    )
    idle_window_minutes: int = setting(
        30,
        "Minutes a held GPU must stay under idle_utilization_floor to count as idle.",
        minimum=1,
        maximum=10080,
    )
    idle_interval_seconds: float = setting(
        60.0,
        "How often the leader looks for idle GPUs in the minutes that arrived.",
        minimum=10.0,
        maximum=3600.0,
    )
    idle_retention_days: float = setting(
        90.0,
        "Days idle intervals are kept after they ended (gpu_idle_intervals); 0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    consumers_interval_seconds: float = setting(
        30.0,
        "How often the consumers (GPUs, pods and utilization per top-level workload) are "
        "computed (the original's 30 s).",
        minimum=5.0,
        maximum=3600.0,
    )
    consumers_utilization_minutes: int = setting(
        5,
        "Minutes of GPU reports a consumer's utilization is the mean of.",
        minimum=1,
        maximum=1440,
    )
    team_label: str = setting(
        "team",
        "Label of a pod's top-level workload whose value is its team, for GPU-hours per team "
        "(gpu_hours_daily); empty: no team grouping.",
        check=_check_label_key,
    )
    gpu_hours_interval_seconds: float = setting(
        60.0,
        "How often today's GPU-hours per namespace, workload and team are summed again from "
        "the hourly rollup (yesterday's every 10 minutes at most).",
        minimum=60.0,
        maximum=86400.0,
    )
    gpu_hours_retention_days: float = setting(
        800.0,
        "Days the daily GPU-hours are kept (gpu_hours_daily); 0: forever.",
        minimum=0.0,
        maximum=36500.0,
    )
    watch_cluster: Literal["auto", "on", "off"] = setting(
        "auto",
        "Whether the jobs reading the Kubernetes API run (allocation, node info, workload "
        "status, storage scan; the cluster is watched, never polled): on, off, or auto (on when "
        "the kube section finds an API, else one log line says they do not run).",
    )
    allocation_interval_seconds: float = setting(
        30.0,
        "How often the GPU allocation (cluster and per node) is computed from the watch "
        "caches (the original's 30 s).",
        minimum=1.0,
        maximum=3600.0,
    )
    node_info_interval_seconds: float = setting(
        30.0,
        "How often GPU nodes' rows (nodes) are brought up to date; a row is written only when "
        "something in it changed.",
        minimum=1.0,
        maximum=3600.0,
    )
    workload_status_interval_seconds: float = setting(
        30.0,
        "How often open GPU pods and workloads are checked against the watch caches (pods "
        "deleted unseen closed, phases persisted, workloads ended).",
        minimum=1.0,
        maximum=3600.0,
    )
    node_cpu_model_label: str = setting(
        "",
        "Node label whose value is the node's CPU model (the node object carries none); "
        "empty: the CPU model stays unknown.",
        check=_check_label_key,
    )
    daily_report_time: str = setting(
        "00:30",
        "Local time (HH:MM) at which the leader writes the daily GPU-hours report of the UTC "
        "day that ended (files under daily_report_dir); empty: no daily report.",
        check=_check_local_time,
    )
    daily_report_dir: str = setting(
        "reports",
        "Directory of the daily reports; a relative path lives under service.data_dir.",
        path=True,
    )
    storage_scan_interval_seconds: float = setting(
        60.0,
        "How often StorageClasses are scanned for storage backends (storage rows) and their "
        "capacity read (the original's 1 min).",
        minimum=5.0,
        maximum=86400.0,
    )
    storage_config_secret: str = setting(
        "lens/lens-storage-config",
        "Secret (NAMESPACE/NAME) holding a cluster's storage config, read in every cluster for "
        "the multi-cluster aggregate.",
        check=check_object_ref,
    )
    multi_storage_config_secret: str = setting(
        "",
        "Secret (NAMESPACE/NAME) the leader writes every cluster's storage config into, one key "
        "per cluster (clusters from controller.clusters_secret); empty: not gathered.",
        check=check_object_ref,
    )
    multi_storage_interval_seconds: float = setting(
        30.0,
        "How often the clusters' storage configs are gathered (the original's 30 s).",
        minimum=5.0,
        maximum=86400.0,
    )
