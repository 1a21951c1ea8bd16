"""The peer-type policy a node runs with: the policy file (or the built-in networks), the pod and
Service networks the config names, and the DNS servers the node and the pod resolve with
(resolv.conf): the original took only the pod's first nameserver and needed kubeadm's
ConfigMap for the rest."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path

from lens.netflow import classify
from lens.runtime import errors
from lens.runtime.config import NetflowConfig


def parse_nameservers(text: str) -> tuple[classify.Network, ...]:
    """The `nameserver` addresses of a resolv.conf, each as its /32 or /128 (a line that is
    not an address is skipped, as the resolver skips it)."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            try:
                found.append(ipaddress.ip_network(fields[1].split("%")[0]))
            except ValueError:
                continue
    return tuple(dict.fromkeys(found))


def read_nameservers(paths: Sequence[Path]) -> tuple[classify.Network, ...]:
    found: list[classify.Network] = []
    for path in paths:
        try:
            found += parse_nameservers(path.read_text(errors="replace"))
        except OSError:
            continue  # none here: nothing to add
    return tuple(dict.fromkeys(found))


def node_policy(config: NetflowConfig, *, root: Path) -> classify.NetworkPolicy:
    """The policy for this node; a bad policy file is a ConfigError naming it."""
    policy = classify.DEFAULT_POLICY
    if config.policy_file:
        try:
            text = Path(config.policy_file).read_text(errors="replace")
        except OSError as exc:
            raise errors.ConfigError(
                source=config.policy_file, key="", expected=f"a readable file ({exc.strerror})"
            ) from None
        policy = classify.parse_policy(text, source=config.policy_file)
    resolvers = read_nameservers([root / "etc/resolv.conf", Path("/etc/resolv.conf")])
    return classify.with_networks(
        policy,
        k8s_pod=classify.networks(config.pod_cidrs, source="config", key="netflow.pod_cidrs"),
        k8s_svc=classify.networks(
            config.service_cidrs, source="config", key="netflow.service_cidrs"
        ),
        dns=resolvers,
    )
