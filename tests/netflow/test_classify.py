from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import classify
from lens.netflow.listeners import Listeners
from lens.netflow.sockets import Endpoint
from lens.runtime import errors

POLICY = classify.with_networks(
    classify.DEFAULT_POLICY,
    k8s_pod=classify.networks(["10.244.0.0/16", "fd00:244::/56"], source="t", key="k8s_pod"),
    k8s_svc=classify.networks(["10.96.0.0/12"], source="t", key="k8s_svc"),
    dns=classify.networks(["10.96.0.10"], source="t", key="dns"),
)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("10.244.3.7", classify.K8S_POD),
        ("fd00:244::17", classify.K8S_POD),
        ("10.96.0.10", classify.K8S_SVC),  # a Service first, in the original's order
        ("10.96.4.1", classify.K8S_SVC),
        ("127.0.0.1", classify.LOCALHOST),
        ("::1", classify.LOCALHOST),
        ("10.1.2.3", classify.INTERNAL),
        ("192.168.7.7", classify.INTERNAL),
        ("8.8.8.8", classify.EXTERNAL),
        ("2001:db8::1", classify.EXTERNAL),
    ],
)
def test_peer_types_follow_the_originals_order(address: str, kind: str) -> None:
    assert classify.Classifier(POLICY).peer_type(ipaddress.ip_address(address)) == kind


def test_the_dns_servers_own_type_when_no_service_range_holds_it() -> None:
    policy = classify.with_networks(
        classify.DEFAULT_POLICY, dns=classify.networks(["10.0.0.2"], source="t", key="dns")
    )
    assert classify.Classifier(policy).peer_type(ipaddress.ip_address("10.0.0.2")) == classify.DNS


def test_a_policy_file_in_the_originals_keys() -> None:
    policy = classify.parse_policy(
        '{"internal_hosts": ["100.64.0.0/10"], "docker": ["172.17.0.0/16"],'
        ' "abnormal_black_list": []}',
        source="policy.json",
    )
    assert policy.internal_hosts == (ipaddress.ip_network("100.64.0.0/10"),)
    assert policy.localhost == classify.DEFAULT_POLICY.localhost  # left out: the built-in
    assert classify.Classifier(policy).peer_type(ipaddress.ip_address("172.17.0.5")) == "docker"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k8s_pod: [10.0.0.0/33]\n", "k8s_pod: CIDRs, got '10.0.0.0/33'"),
        ("k8s_pods: []\n", "k8s_pods: one of"),
        ("- 1\n", "a mapping of peer types"),
        ("k8s_pod: 10.0.0.0/8\n", "k8s_pod: a list of CIDRs"),
    ],
)
def test_a_bad_policy_is_a_config_error_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message):
        classify.parse_policy(text, source="policy.yaml")


LISTENING = Listeners(endpoints=frozenset({Endpoint(address=ipaddress.ip_address("::"), port=443)}))


def _local(port: int) -> Endpoint:
    return Endpoint(address=ipaddress.ip_address("10.1.0.5"), port=port)


def test_direction_from_who_opened_else_from_the_listeners() -> None:
    assert classify.direction("there", _local(50000), LISTENING) == "inbound"
    assert classify.direction("here", _local(443), LISTENING) == "outbound"
    assert classify.direction("unknown", _local(443), LISTENING) == "inbound"
    assert classify.direction("unknown", _local(50000), LISTENING) == "outbound"


@given(st.text())
def test_any_policy_text_is_a_policy_or_a_config_error(text: str) -> None:
    try:
        policy = classify.parse_policy(text, source="p")
    except errors.ConfigError:
        return
    assert isinstance(policy, classify.NetworkPolicy)
