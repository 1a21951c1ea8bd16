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


@pytest.mark.parametrize("value", ["00:30", "23:59", ""])
def test_the_daily_report_time_is_a_local_time_or_empty(value: str) -> None:
    built = settings.build(JobsConfig, {"daily_report_time": value}, source="test")
    assert built.daily_report_time == value


@pytest.mark.parametrize("value", ["24:00", "7:30", "07:60", "noon"])
def test_a_daily_report_time_that_is_not_hh_mm_is_refused(value: object) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(JobsConfig, {"daily_report_time": value}, source="test")
    assert caught.value.key == "daily_report_time"
    assert "HH:MM" in str(caught.value)
