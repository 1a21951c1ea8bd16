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


def test_the_team_label_must_fit_its_column_and_the_lease_name_an_object() -> None:
    assert settings.build(JobsConfig, {"team_label": ""}, source="test").team_label == ""
    for key, value in (("team_label", "x" * 129), ("lease", "no-slash")):
        with pytest.raises(errors.ConfigError) as caught:
            settings.build(JobsConfig, {key: value}, source="test")
        assert caught.value.key == key
