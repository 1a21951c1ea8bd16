"""The one typed, immutable Config: defaults < YAML file < `LENS_<SECTION>__<KEY>` environment.

cli.py calls `load()` once and passes the narrowest section down. This is the only module that
reads the environment (STYLE S11.4): overrides, `LENS_CONFIG`, password variables, the data dir.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml

from lens.runtime import dburl, errors, settings
from lens.runtime.kubesections import ControllerConfig, KubeConfig
from lens.runtime.settings import Secret, setting

ENV_PREFIX = "LENS_"
ENV_CONFIG = "LENS_CONFIG"

_LABEL_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def _check_cluster_name(name: object) -> str | None:
    if isinstance(name, str) and _LABEL_RE.match(name):
        return None
    return "expected a DNS label: 1-63 lowercase letters, digits or '-'"


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
class DatabaseConfig:
    """The SQL store shared by the controller, jobs and api."""

    url: str = setting(
        "sqlite:///lens.db",
        "Database URL: sqlite:///PATH (a relative PATH lives under service.data_dir), "
        "postgresql://USER@HOST:PORT/NAME or mysql://USER@HOST:PORT/NAME (MariaDB). "
        "Query parameters go to the driver (e.g. ?sslmode=verify-full).",
        check=dburl.check_database_url,
        redact=dburl.redact_url,
    )
    password: Secret = setting(
        Secret(""),
        "Database password; never printed. Prefer password_file or password_env.",
    )
    password_file: str = setting(
        "", "File whose content (without the trailing newline) is the database password."
    )
    password_env: str = setting(
        "", "Name of an environment variable that holds the database password."
    )
    migrate_on_start: bool = setting(
        True, "Apply pending schema migrations when a role starts (lens db migrate does it too)."
    )
    max_connections: int = setting(
        10,
        "Most connections one process keeps open to PostgreSQL or MariaDB.",
        minimum=1,
        maximum=1000,
    )
    connect_timeout_seconds: float = setting(
        10.0, "How long opening a connection may take.", minimum=0.1, maximum=600
    )
    busy_timeout_seconds: float = setting(
        10.0,
        "SQLite only: how long a writer waits for another writer's lock before failing.",
        minimum=0,
        maximum=600,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """The HTTP port of a role: /healthz, /readyz, /metrics and the role's REST API."""

    host: str = setting("0.0.0.0", "Address to listen on.")
    port: int = setting(8989, "Port to listen on (0 picks a free port).", minimum=0, maximum=65535)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServiceConfig:
    """Lifecycle of a long-running role."""

    data_dir: str = setting(
        "",
        "Directory for embedded data such as the SQLite database. Empty means /var/lib/lens "
        "for root, else $XDG_DATA_HOME/lens or ~/.local/share/lens.",
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HostConfig:
    """The host a node agent or a diagnostic reads: its filesystem root and its tools."""

    root: str = setting(
        "/",
        "Where the host's filesystem is seen (sysfs, /dev, /proc): / on the host, /host in "
        "the DaemonSet, which mounts the host's root there.",
    )
    tool_prefix: tuple[str, ...] = setting(
        (),
        "Command that runs a host tool in the host's namespaces, e.g. nsenter, --target, 1, "
        "--mount, --; empty runs tools directly (a bare name is looked for under root first).",
    )
    tool_timeout_seconds: float = setting(
        30.0, "Longest a host tool may run before it is stopped.", minimum=0.1, maximum=600
    )
    amd_smi: str = setting("amd-smi", "The amd-smi program (a name or a path).")
    rocm_smi: str = setting("rocm-smi", "The rocm-smi program, used when amd-smi fails.")
    rdma_tool: str = setting(
        "rdma", "The iproute2 rdma program, used when /sys/class/infiniband is not visible."
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class KubeletConfig:
    """How the node agent reaches its node's kubelet (/pods and /stats/summary)."""

    url: str = setting(
        "",
        "Base URL of this node's kubelet, e.g. https://$(NODE_IP):10250 in the DaemonSet; "
        "empty turns the kubelet collectors off.",
    )
    token_file: str = setting(
        "/var/run/secrets/kubernetes.io/serviceaccount/token",
        "Bearer token file; re-read whenever it changes (projected tokens rotate).",
    )
    ca_file: str = setting(
        "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
        "CA bundle that signed the kubelet's serving certificate; empty uses the system CAs.",
    )
    insecure_skip_tls_verify: bool = setting(
        False, "Accept any kubelet certificate (self-signed serving certificates); avoid."
    )
    timeout_seconds: float = setting(
        5.0, "Longest one kubelet request may take.", minimum=0.1, maximum=300
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAgentConfig:
    """The per-node agent: which collectors run and how often."""

    node_name: str = setting(
        "",
        "Name of this node (set LENS_NODE_AGENT__NODE_NAME from spec.nodeName in the "
        "DaemonSet); empty uses the host name.",
    )
    collectors: tuple[str, ...] = setting(
        ("amdgpu", "nvidia", "dri", "rdma", "kubelet", "ephemeral_storage"),
        "Collectors to run; GPU collectors run only where that vendor's GPUs are on the bus.",
    )
    gpu_interval_seconds: float = setting(
        1.0, "How often GPUs are read (amdgpu, nvidia).", minimum=0.1, maximum=3600
    )
    rdma_interval_seconds: float = setting(
        1.0, "How often RDMA devices and counters are read.", minimum=0.1, maximum=3600
    )
    dri_interval_seconds: float = setting(
        10.0, "How often DRI device nodes are mapped to GPUs.", minimum=0.1, maximum=3600
    )
    kubelet_interval_seconds: float = setting(
        10.0,
        "How often GPU requests (kubelet /pods) and ephemeral storage (/stats/summary) are read.",
        minimum=1,
        maximum=3600,
    )
    static_refresh_seconds: float = setting(
        600.0,
        "How often static GPU facts are re-read with amd-smi (also at start).",
        minimum=10,
        maximum=86400,
    )
    collector_timeout_seconds: float = setting(
        10.0,
        "Longest a collector may take; a collector also never takes longer than its interval. "
        "One that overruns is reported failed for that cycle.",
        minimum=0.05,
        maximum=600,
    )
    rdma_tool_fallback: bool = setting(
        True, "Read RDMA devices with the rdma tool when sysfs shows none."
    )
    gpu_resources: tuple[str, ...] = setting(
        ("amd.com/gpu", "nvidia.com/gpu"),
        "Extended resources whose requests count as GPU allocation on this node.",
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainersConfig:
    """How the node agent follows containers and attributes devices to them."""

    containerd_address: str = setting(
        "/run/containerd/containerd.sock",
        "containerd's gRPC socket (mount the host's /run/containerd into the agent); empty "
        "turns container tracking off.",
    )
    namespace: str = setting("k8s.io", "containerd namespace of Kubernetes' containers.")
    reconcile_interval_seconds: float = setting(
        60.0,
        "How often the live containers are listed again to catch anything the events missed.",
        minimum=1,
        maximum=86400,
    )
    request_timeout_seconds: float = setting(
        5.0,
        "Longest one containerd or kubelet pod-resources call may take.",
        minimum=0.1,
        maximum=300,
    )
    pod_resources_socket: str = setting(
        "/var/lib/kubelet/pod-resources/kubelet.sock",
        "The kubelet's pod-resources socket: which devices each container was allocated "
        "(overrides privileged containers' full device lists); empty turns it off.",
    )
    docker_address: str = setting(
        "",
        "Docker Engine socket (e.g. /var/run/docker.sock) followed as a second source; empty: off.",
    )
    all_containers: bool = setting(
        False, "Report every container, not only those given a GPU or RDMA device."
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EventsConfig:
    """How the node agent delivers container events to `lens jobs`."""

    server_address: str = setting(
        "",
        "host:port of the jobs event server (e.g. lens-jobs.lens:8991); empty keeps events on "
        "the node (/v1/pods still answers).",
    )
    tls: bool = setting(False, "Connect with TLS.")
    ca_file: str = setting("", "CA bundle for the server's certificate; empty: system CAs.")
    token_file: str = setting(
        "", "File holding the bearer token sent to the server; re-read on every connection."
    )
    buffer_records: int = setting(
        100_000,
        "Unacknowledged events kept for resending; when full the oldest are dropped and counted.",
        minimum=10,
        maximum=10_000_000,
    )
    batch_records: int = setting(1000, "Most events sent in one batch.", minimum=1, maximum=100_000)
    journal_dir: str = setting(
        "",
        "Directory (a hostPath) where unacknowledged events survive an agent restart; empty: "
        "memory only.",
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JobsConfig:
    """The jobs role: its gRPC event server."""

    grpc_host: str = setting("0.0.0.0", "Address the event server listens on.")
    grpc_port: int = setting(8991, "Port of the event server.", minimum=0, maximum=65535)
    tls_cert_file: str = setting("", "Server certificate (PEM); with tls_key_file turns TLS on.")
    tls_key_file: str = setting("", "Private key of tls_cert_file (PEM).")
    token_file: str = setting(
        "", "File holding the bearer token agents must send; empty: no token required."
    )
    batch_records: int = setting(
        5000,
        "Most events written in one transaction (batches waiting together are merged).",
        minimum=1,
        maximum=100_000,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Everything Lens can be configured with."""

    cluster: ClusterConfig = setting(ClusterConfig(), "The cluster this process belongs to.")
    logging: LoggingConfig = setting(LoggingConfig(), "Log output.")
    database: DatabaseConfig = setting(DatabaseConfig(), "The SQL store.")
    server: ServerConfig = setting(ServerConfig(), "The HTTP server of a role.")
    service: ServiceConfig = setting(ServiceConfig(), "Lifecycle of long-running roles.")
    host: HostConfig = setting(HostConfig(), "The host a node agent reads.")
    kubelet: KubeletConfig = setting(KubeletConfig(), "The node agent's kubelet.")
    node_agent: NodeAgentConfig = setting(NodeAgentConfig(), "The per-node agent.")
    containers: ContainersConfig = setting(ContainersConfig(), "The node agent's containers.")
    events: EventsConfig = setting(EventsConfig(), "Container events from agents to jobs.")
    jobs: JobsConfig = setting(JobsConfig(), "The jobs role.")
    kube: KubeConfig = setting(KubeConfig(), "The Kubernetes API.")
    controller: ControllerConfig = setting(ControllerConfig(), "The controller role.")


EXAMPLE_HEADER = """\
Lens configuration: every key with its default.
Pass it with `--config FILE` or LENS_CONFIG=FILE. Any key can be overridden by an
environment variable LENS_<SECTION>__<KEY>, e.g. LENS_DATABASE__URL or LENS_LOGGING__LEVEL.
Generated by `lens config example`; a test keeps it in step with lens/runtime/config.py."""


def example() -> str:
    """The documented example config (config.example.yaml)."""
    return settings.render_example(Config, header=EXAMPLE_HEADER)


def load(path: str | None = None, *, environ: Mapping[str, str] | None = None) -> Config:
    """Load the effective config, or raise ConfigError naming the source and key at fault."""
    env = os.environ if environ is None else environ
    path = path or env.get(ENV_CONFIG) or None
    source = path or "defaults"
    raw = _read_file(path) if path else {}
    raw, origins = _apply_env(raw, env)
    cfg = settings.build(Config, raw, source=source, origins=origins)
    return _resolve(cfg, env, origins, source)


def _read_file(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise errors.ConfigError(
            source=path, key="", expected=f"a readable YAML file ({exc.strerror})"
        ) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise errors.ConfigError(source=path, key="", expected=_yaml_problem(exc)) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise errors.ConfigError(source=path, key="", expected="a YAML mapping of sections")
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "syntax error"
    if mark is not None:
        return f"valid YAML (line {mark.line + 1}, column {mark.column + 1}: {problem})"
    return f"valid YAML ({problem})"


def _apply_env(
    raw: dict[str, Any], env: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Overlay LENS_<SECTION>__<KEY> variables; return the data and each key's source."""
    merged: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    origins: dict[str, str] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = [part.lower() for part in name[len(ENV_PREFIX) :].split("__")]
        origin = f"environment variable {name}"
        if any(not part for part in path) or len(path) != 2:
            raise errors.ConfigError(
                source=origin, key=".".join(path), expected="LENS_<SECTION>__<KEY>"
            )
        section, key = path
        target = merged.setdefault(section, {})
        if not isinstance(target, dict):
            raise errors.ConfigError(source=origin, key=section, expected="a mapping section")
        target[key] = settings.EnvText(env[name])
        origins[f"{section}.{key}"] = origin
        origins.setdefault(section, origin)
    return merged, origins


def default_data_dir(env: Mapping[str, str]) -> str:
    """Where embedded data lives when service.data_dir is empty."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "/var/lib/lens"
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local/share")
    return str(Path(base) / "lens")


def _resolve(
    cfg: Config, env: Mapping[str, str], origins: Mapping[str, str], source: str
) -> Config:
    """Fill values derived from others: the data dir, the SQLite path, the password."""
    data_dir = cfg.service.data_dir or default_data_dir(env)
    data_dir = str(Path(data_dir).expanduser())
    service = dataclasses.replace(cfg.service, data_dir=data_dir)
    database = _resolve_database(cfg.database, data_dir, env, origins, source)
    kube = _resolve_kube(cfg.kube, env)
    return dataclasses.replace(cfg, service=service, database=database, kube=kube)


def _resolve_database(
    db: DatabaseConfig,
    data_dir: str,
    env: Mapping[str, str],
    origins: Mapping[str, str],
    source: str,
) -> DatabaseConfig:
    url = dburl.parse_database_url(db.url)
    if url.engine == "sqlite" and not url.is_memory and not Path(url.database).is_absolute():
        db = dataclasses.replace(db, url=dburl.sqlite_url(str(Path(data_dir) / url.database)))

    def where(key: str) -> str:
        return origins.get(f"database.{key}", source)

    given = [k for k in ("password", "password_file", "password_env") if getattr(db, k)]
    if url.password:
        given.insert(0, "url")
    if len(given) > 1:
        raise errors.ConfigError(
            source=where(given[1]),
            key=f"database.{given[1]}",
            expected=f"only one password source, but database.{given[0]} gives one too",
        )
    if url.engine == "sqlite" and given:
        raise errors.ConfigError(
            source=where(given[0]), key=f"database.{given[0]}", expected="no password for sqlite"
        )
    if db.password_file:
        try:
            secret = Path(db.password_file).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise errors.ConfigError(
                source=where("password_file"),
                key="database.password_file",
                expected=f"a readable file ({exc.strerror}: {db.password_file})",
            ) from exc
        db = dataclasses.replace(db, password=Secret(secret))
    elif db.password_env:
        if db.password_env not in env:
            raise errors.ConfigError(
                source=where("password_env"),
                key="database.password_env",
                expected=f"the name of a set environment variable ({db.password_env} is not set)",
            )
        db = dataclasses.replace(db, password=Secret(env[db.password_env]))
    return db


IN_CLUSTER_HOST_ENV = "KUBERNETES_SERVICE_HOST"


def _resolve_kube(kube: KubeConfig, env: Mapping[str, str]) -> KubeConfig:
    """auto → in-cluster inside a pod, else kubeconfig; an empty kubeconfig → $KUBECONFIG or
    ~/.kube/config."""
    source = kube.source
    if source == "auto":
        source = "in-cluster" if env.get(IN_CLUSTER_HOST_ENV) else "kubeconfig"
    path = kube.kubeconfig
    if not path:
        listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
        path = listed[0] if listed else str(Path(env.get("HOME", "~")) / ".kube" / "config")
    return dataclasses.replace(kube, source=source, kubeconfig=str(Path(path).expanduser()))
