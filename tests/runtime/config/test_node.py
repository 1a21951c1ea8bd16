from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import ContainersConfig, EventsConfig, HostConfig, NodeAgentConfig


def test_the_node_agent_reads_the_host_root_and_every_collector_by_default() -> None:
    assert HostConfig().root == "/"
    assert set(NodeAgentConfig().collectors) >= {"amdgpu", "nvidia", "dri", "rdma"}
    assert ContainersConfig().namespace == "k8s.io"


def test_an_interval_out_of_bounds_names_its_key() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(NodeAgentConfig, {"gpu_interval_seconds": -1}, source="test")
    assert caught.value.key == "gpu_interval_seconds"


def test_a_batch_of_events_is_bounded() -> None:
    with pytest.raises(errors.ConfigError, match="from 1 to 100000"):
        settings.build(EventsConfig, {"batch_records": 0}, source="test")
