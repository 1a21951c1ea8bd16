"""The `netflow` config section: how `lens netflow` reads, classifies and exports TCP flows."""

from __future__ import annotations

import dataclasses
import ipaddress

from lens.runtime.settings import setting


def _check_cidrs(value: object) -> str | None:
    if not isinstance(value, tuple):
        return "expected a list of CIDRs"
    for item in value:
        try:
            ipaddress.ip_network(str(item), strict=False)
        except ValueError:
            return f"expected CIDRs, got {item!r}"
    return None


def _check_backend(value: object) -> str | None:
    return None if value in ("auto", "ebpf", "sockdiag") else "expected auto, ebpf or sockdiag"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NetflowConfig:
    """TCP flows, RTT and connections of a node (docs/netflow.md)."""

    interval_seconds: float = setting(
        5.0,
        "How often the kernel's counters are read and the metrics updated.",
        minimum=0.5,
        maximum=300.0,
    )
    top_peers: int = setting(
        100,
        "Peers told apart in the metrics each interval (those with the most bytes); the rest "
        'are counted as peer="other".',
        minimum=1,
        maximum=100_000,
    )
    series_ttl_seconds: float = setting(
        600.0,
        "A flow's series not updated for this long is removed.",
        minimum=10.0,
        maximum=86_400.0,
    )
    policy_file: str = setting(
        "",
        "The peer-type policy (JSON or YAML, the original's keys: internal_hosts, k8s_pod, "
        "k8s_svc, dns, docker, localhost); empty: the built-in networks.",
        path=True,
    )
    pod_cidrs: tuple[str, ...] = setting(
        (), "Pod networks, added to the policy's k8s_pod.", check=_check_cidrs
    )
    service_cidrs: tuple[str, ...] = setting(
        (), "Service networks, added to the policy's k8s_svc.", check=_check_cidrs
    )
    cluster_networks: bool = setting(
        False,
        "Read the pod and Service networks from the Kubernetes API (nodes' podCIDRs, "
        "ServiceCIDR objects, kubeadm's ConfigMap) and add them to k8s_pod and k8s_svc.",
    )
    cluster_networks_refresh_seconds: float = setting(
        300.0,
        "How often the cluster's networks are read again.",
        minimum=10.0,
        maximum=86_400.0,
    )
    peer_pods: bool = setting(
        False,
        "Watch the cluster's pods to name each peer that is a pod — namespace, pod, workload "
        "— in lens_netflow_peer_pod_info. Every node then watches every pod (list and watch "
        "on pods in its ClusterRole; about 2.4 KB of memory a pod).",
    )
    backend: str = setting(
        "auto",
        "What reads the sockets: ebpf (tracepoints, every byte), sockdiag (TCP_INFO sampled "
        "each interval: no eBPF needed, a socket's last interval lost), or auto (ebpf where it "
        "can run, else sockdiag).",
        check=lambda value: (
            None if value in ("auto", "ebpf", "sockdiag") else "expected auto, ebpf or sockdiag"
        ),
    )
    kernel_headers: str = setting(
        "",
        "Kernel headers linked for bcc where /lib/modules/$(uname -r)/build has none (the "
        "netflow image sets its Debian headers); empty: none are linked.",
        path=True,
    )
    max_flows: int = setting(
        65536,
        "Sockets the kernel's map holds at once; beyond, new ones are not tracked (counted in "
        "lens_netflow_kernel_dropped_total).",
        minimum=1024,
        maximum=4_194_304,
    )
