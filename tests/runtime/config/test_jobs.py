from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import JobsConfig


def test_the_event_server_listens_on_its_own_port() -> None:
    assert (JobsConfig().grpc_host, JobsConfig().grpc_port) == ("0.0.0.0", 8991)


def test_a_port_out_of_range_is_refused() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(JobsConfig, {"grpc_port": 70000}, source="test")
    assert caught.value.key == "grpc_port"
