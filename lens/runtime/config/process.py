"""Config sections every long-running process has: its cluster, logs, HTTP port and lifecycle.

config/root.py assembles them into Config; runtime/process.py and the launcher read them.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from lens.runtime import names
from lens.runtime.settings import setting


def _check_cluster_name(name: object) -> str | None:
    if isinstance(name, str) and names.is_dns_label(name):
        return None
    return f"expected {names.DNS_LABEL}"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterConfig:
    """Which cluster this process belongs to."""

    name: str = setting(
        "default",
        "Name of this cluster; every stored row carries it in its `cluster` column.",
        check=_check_cluster_name,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LoggingConfig:
    """How log lines are written (to stderr)."""

    level: Literal["debug", "info", "warning", "error"] = setting(
        "info", "Lowest level that is logged: debug, info, warning or error."
    )
    format: Literal["auto", "json", "text"] = setting(
        "auto", "Line format: json, text, or auto (text on a terminal, JSON otherwise)."
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """The HTTP port of a role: /healthz, /readyz, /metrics and the role's REST API."""

    host: str = setting("0.0.0.0", "Address to listen on.")
    port: int = setting(8989, "Port to listen on (0 picks a free port).", minimum=0, maximum=65535)
    read_timeout_seconds: float = setting(
        10.0,
        "Longest a request's line and headers may take to arrive, and each later read or write "
        "of it; a slower client is disconnected.",
        minimum=0.1,
        maximum=600,
    )
    # 75 s: above Prometheus's default 60 s scrape interval, so a scraper's connection is
    # reused from one scrape to the next (as nginx's keepalive_timeout default).
    idle_timeout_seconds: float = setting(
        75.0,
        "Longest a kept-alive connection may wait for its next request before it is closed; "
        "keep it above the scrape interval.",
        minimum=0.1,
        maximum=3600,
    )
    max_connections: int = setting(
        64,
        "Connections served at once, idle kept-alive ones included; a further one is answered "
        "503 and closed.",
        minimum=1,
        maximum=10000,
    )
    # 16 MiB: a Prometheus remote-write request of 2,000 samples is a few hundred KB, a
    # fluent-bit chunk at most a few MB; the bound keeps one client from filling memory.
    max_body_bytes: int = setting(
        16 << 20,
        "Largest request body accepted (telemetry intake's POSTs), in bytes; a larger one is "
        "answered 413.",
        minimum=1024,
        maximum=1 << 30,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServiceConfig:
    """Lifecycle of a long-running role."""

    data_dir: str = setting(
        "",
        "Directory for embedded data such as the SQLite database. Empty means /var/lib/lens "
        "for root, else $XDG_DATA_HOME/lens or ~/.local/share/lens.",
        path=True,
    )
    stop_timeout_seconds: float = setting(
        10.0,
        "On SIGTERM or SIGINT, the longest a graceful stop may take before the process exits.",
        minimum=0.1,
        maximum=3600,
    )
    metrics_interval_seconds: float = setting(
        5.0,
        "How often the role's own metrics are rendered for /metrics when no collection cycle "
        "renders them sooner.",
        minimum=0.1,
        maximum=3600,
    )
    readiness_interval_seconds: float = setting(
        5.0,
        "How often readiness checks run; /readyz answers from the last result.",
        minimum=0.1,
        maximum=3600,
    )
    loop_jitter_ratio: float = setting(
        0.1,
        "Random spread of each periodic loop's interval, as a fraction of it, so that many "
        "processes do not run in step.",
        minimum=0,
        maximum=0.5,
    )
