from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import classify, networks
from lens.runtime import errors
from lens.runtime.config import NetflowConfig


def test_nameservers_of_a_resolv_conf() -> None:
    text = "search cluster.local\nnameserver 10.96.0.10\nnameserver fe80::1%eth0\nnameserver x\n"
    assert networks.parse_nameservers(text) == (
        ipaddress.ip_network("10.96.0.10/32"),
        ipaddress.ip_network("fe80::1/128"),
    )


def test_the_node_policy_joins_file_config_and_resolvers(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/resolv.conf").write_text("nameserver 192.168.1.1\n")
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("docker: [172.17.0.0/16]\n")
    config = NetflowConfig(
        policy_file=str(policy_file), pod_cidrs=("10.244.0.0/16",), service_cidrs=("10.96.0.0/12",)
    )
    policy = networks.node_policy(config, root=tmp_path)
    classifier = classify.Classifier(policy)
    kinds = {
        address: classifier.peer_type(ipaddress.ip_address(address))
        for address in ("10.244.0.9", "10.96.0.1", "192.168.1.1", "172.17.0.2", "192.168.1.2")
    }
    assert kinds == {
        "10.244.0.9": classify.K8S_POD,
        "10.96.0.1": classify.K8S_SVC,
        "192.168.1.1": classify.DNS,
        "172.17.0.2": classify.DOCKER,
        "192.168.1.2": classify.INTERNAL,
    }


def test_an_unreadable_policy_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="a readable file"):
        networks.node_policy(NetflowConfig(policy_file=str(tmp_path / "none")), root=tmp_path)


@given(st.text())
def test_any_resolv_conf_gives_networks(text: str) -> None:
    assert all(net.num_addresses == 1 for net in networks.parse_nameservers(text))
