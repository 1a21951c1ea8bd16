"""Who a TCP peer is and which way a connection goes.

The peer's type follows the original's policy (REFERENCE.md 9.4) and its match order: a pod
(`k8s_pod` CIDRs), a Service (`k8s_svc`), the cluster's DNS (`dns`), `docker`, `localhost`,
the network's own hosts (`internal_hosts`), else `externalHosts`. The direction is `inbound`
when the peer opened the connection (seen opened, or to a port this node listens on) and
`outbound` when this node did; the original's own labels are derived in `compat.py`.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, fields
from typing import Literal

import yaml

from lens.netflow.listeners import Listeners
from lens.netflow.sockets import Endpoint, IPAddress, Opened
from lens.runtime import errors

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Direction = Literal["inbound", "outbound"]

# The original's type names, in its match order; a peer none matches is EXTERNAL.
K8S_POD = "k8sPod"
K8S_SVC = "k8sSvc"
DNS = "dns"
DOCKER = "docker"
LOCALHOST = "localhost"
INTERNAL = "internalHosts"
EXTERNAL = "externalHosts"
CACHE_ENTRIES = 65536


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkPolicy:
    """The networks of each peer type (the original's policy keys)."""

    k8s_pod: tuple[Network, ...] = ()
    k8s_svc: tuple[Network, ...] = ()
    dns: tuple[Network, ...] = ()
    docker: tuple[Network, ...] = ()
    localhost: tuple[Network, ...] = ()
    internal_hosts: tuple[Network, ...] = ()

    def ordered(self) -> tuple[tuple[str, tuple[Network, ...]], ...]:
        return (
            (K8S_POD, self.k8s_pod),
            (K8S_SVC, self.k8s_svc),
            (DNS, self.dns),
            (DOCKER, self.docker),
            (LOCALHOST, self.localhost),
            (INTERNAL, self.internal_hosts),
        )


def networks(values: object, *, source: str, key: str) -> tuple[Network, ...]:
    """A list of CIDRs (an address alone is its /32 or /128); ConfigError naming the bad one."""
    if not isinstance(values, list | tuple):
        raise errors.ConfigError(source=source, key=key, expected="a list of CIDRs")
    found = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(str(value), strict=False))
        except ValueError:
            raise errors.ConfigError(
                source=source, key=key, expected=f"CIDRs, got {value!r}"
            ) from None
    return tuple(found)


DEFAULT_POLICY = NetworkPolicy(
    localhost=networks(["127.0.0.0/8", "::1/128"], source="built-in", key="localhost"),
    internal_hosts=networks(
        ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fe80::/10"],
        source="built-in",
        key="internal_hosts",
    ),
)
# Keys of the original's policy that it never used (abnormal-address lists): accepted, ignored.
IGNORED_KEYS = ("abnormal_black_list", "abnormal_white_list")


def parse_policy(text: str, *, source: str) -> NetworkPolicy:
    """A policy file (JSON or YAML, the original's snake_case keys); keys it leaves out keep the
    built-in networks. Anything wrong is a ConfigError naming the key."""
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise errors.ConfigError(
            source=source, key="", expected=f"JSON or YAML ({first})"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise errors.ConfigError(source=source, key="", expected="a mapping of peer types")
    known = {field.name for field in fields(NetworkPolicy)}
    chosen = {}
    for key, value in data.items():
        if key in IGNORED_KEYS:
            continue
        if key not in known:
            raise errors.ConfigError(
                source=source, key=str(key), expected="one of " + ", ".join(sorted(known))
            )
        chosen[key] = networks(value, source=source, key=key)
    return NetworkPolicy(**{**_as_dict(DEFAULT_POLICY), **chosen})


def with_networks(policy: NetworkPolicy, **added: tuple[Network, ...]) -> NetworkPolicy:
    """The policy with networks found in the cluster added to a type's own."""
    merged = _as_dict(policy)
    for key, found in added.items():
        merged[key] = tuple(dict.fromkeys((*merged[key], *found)))
    return NetworkPolicy(**merged)


def _as_dict(policy: NetworkPolicy) -> dict[str, tuple[Network, ...]]:
    return {field.name: getattr(policy, field.name) for field in fields(NetworkPolicy)}


class Classifier:
    """Peer types by the policy, remembered per address (a bounded cache)."""

    def __init__(self, policy: NetworkPolicy) -> None:
        self.policy = policy
        self._ordered = policy.ordered()
        self._known: dict[IPAddress, str] = {}

    def peer_type(self, address: IPAddress) -> str:
        found = self._known.get(address)
        if found is None:
            found = next(
                (
                    name
                    for name, nets in self._ordered
                    if any(address.version == net.version and address in net for net in nets)
                ),
                EXTERNAL,
            )
            if len(self._known) >= CACHE_ENTRIES:
                self._known.clear()
            self._known[address] = found
        return found


def direction(opened: Opened, local: Endpoint, listening: Listeners) -> Direction:
    """`inbound` when the peer opened the connection, `outbound` when this node did; for a
    connection open before Lens, whether it came to a port this node listens on."""
    if opened == "there":
        return "inbound"
    if opened == "here":
        return "outbound"
    return "inbound" if listening.accepts(local) else "outbound"
