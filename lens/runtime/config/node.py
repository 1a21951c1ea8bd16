"""Config sections of the node agent: the host it reads, its kubelet, collectors, containers
and the container events it ships."""

from __future__ import annotations

import dataclasses

from lens.runtime.settings import setting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HostConfig:
    """The host a node agent or a diagnostic reads: its filesystem root and its tools."""

    root: str = setting(
        "/",
        "Where the host's filesystem is seen (sysfs, /dev, /proc): / on the host, /host in "
        "the DaemonSet, which mounts the host's root there.",
        path=True,
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
    keep_files_open: bool = setting(
        True,
        "Keep the sysfs attributes read every second open between reads (one pread each, about "
        "17 descriptors per GPU); off opens each at each read, for a process that runs many "
        "agents within its open-file limit (lens demo).",
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
        path=True,
    )
    ca_file: str = setting(
        "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
        "CA bundle that signed the kubelet's serving certificate; empty uses the system CAs.",
        path=True,
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
    gpu_health: bool = setting(
        True,
        "Judge each GPU's health by the rules of docs/node-agent.md (lens_gpu_health, "
        "lens_gpu_health_reason, lens_gpu_throttled); off, none of those series.",
    )
    gpu_correctable_errors_per_hour: float = setting(
        100.0,
        "Correctable GPU memory errors in an hour above which a GPU is degraded "
        "(health reason ecc_correctable_rate).",
        minimum=0,
        maximum=1e9,
    )
    holder_labels: bool = setting(
        True,
        "Put pod, namespace, container and holders (the count) of the container holding a GPU "
        "or RDMA device on every series of that device, as the vendors' exporters do; off, "
        "only lens_gpu_holder_info and lens_ib_port_holder_info name the holders.",
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainersConfig:
    """How the node agent follows containers and attributes devices to them."""

    containerd_address: str = setting(
        "/run/containerd/containerd.sock",
        "containerd's gRPC socket (mount the host's /run/containerd into the agent); empty "
        "turns container tracking off.",
        path=True,
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
        path=True,
    )
    docker_address: str = setting(
        "",
        "Docker Engine socket (e.g. /var/run/docker.sock) followed as a second source; empty: off.",
        path=True,
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
    ca_file: str = setting(
        "", "CA bundle for the server's certificate; empty: system CAs.", path=True
    )
    token_file: str = setting(
        "",
        "File holding the bearer token sent to the server; re-read on every connection.",
        path=True,
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
        path=True,
    )
    device_reports: bool = setting(
        True,
        "Also send each GPU's and RDMA port's use per minute, attributed to the pods holding "
        "the GPUs, and the node's device inventory (docs/reports.md); needs server_address.",
    )
