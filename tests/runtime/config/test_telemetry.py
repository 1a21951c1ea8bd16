from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import TelemetryConfig


def test_by_default_logs_are_taken_and_remote_write_is_off() -> None:
    config = TelemetryConfig()
    assert config.logs_enabled
    assert config.remote_write_url == ""
    assert (config.remote_write_protocol, config.team_label_name) == ("1.0", "team")


def test_a_target_protocol_and_label_name_are_read() -> None:
    built = settings.build(
        TelemetryConfig,
        {
            "remote_write_url": "https://mimir:8080/api/v1/push",
            "remote_write_protocol": "2.0",
            "team_label_name": "lens_team",
        },
        source="test",
    )
    assert built.remote_write_url == "https://mimir:8080/api/v1/push"
    assert (built.remote_write_protocol, built.team_label_name) == ("2.0", "lens_team")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("remote_write_url", "mimir:8080"),
        ("remote_write_protocol", "1.1"),
        ("team_label_name", "__team"),
        ("team_label_name", "team-name"),
        ("team_label_name", "9team"),
        ("team_label_name", "équipe"),
        ("straggler_share", 0),
        ("remote_write_queue_requests", 0),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(key: str, value: object) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(TelemetryConfig, {key: value}, source="test")
    assert caught.value.key == key
