from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import ClusterConfig, ServerConfig, ServiceConfig


@pytest.mark.parametrize("name", ["default", "prod-a", "a", "x" * 63])
def test_a_cluster_is_named_by_a_dns_label(name: str) -> None:
    assert settings.build(ClusterConfig, {"name": name}, source="test").name == name


@pytest.mark.parametrize("name", ["Prod", "-a", "a-", "a_b", "x" * 64, ""])
def test_a_cluster_name_that_is_no_dns_label_is_refused(name: str) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(ClusterConfig, {"name": name}, source="test")
    assert caught.value.key == "name"
    assert caught.value.expected.startswith("expected a DNS label")


def test_the_port_and_the_stop_bound_have_limits() -> None:
    with pytest.raises(errors.ConfigError, match="from 0 to 65535"):
        settings.build(ServerConfig, {"port": 65536}, source="test")
    with pytest.raises(errors.ConfigError, match=r"from 0\.1 to 3600"):
        settings.build(ServiceConfig, {"stop_timeout_seconds": 0}, source="test")
    assert ServiceConfig().stop_timeout_seconds == 10.0
