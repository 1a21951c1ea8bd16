from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import TuneConfig


def test_by_default_the_built_in_policy_is_kept_and_repaired() -> None:
    config = TuneConfig()
    assert (config.policy_file, config.repair, config.interval_seconds) == ("", True, 2.0)
    assert config.record_file == "var/lib/lens/tune/record.json"


def test_a_policy_file_labels_and_node_are_read() -> None:
    built = settings.build(
        TuneConfig,
        {"policy_file": "/etc/lens/tune/policy.yaml", "node_labels": "gpu=yes", "node_name": "n1"},
        source="test",
    )
    assert (built.policy_file, built.node_labels, built.node_name) == (
        "/etc/lens/tune/policy.yaml",
        "gpu=yes",
        "n1",
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("record_file", "/var/lib/lens/record.json"),
        ("record_file", "var/../../etc/passwd"),
        ("record_file", ""),
        ("interval_seconds", 0.01),
        ("labels_refresh_seconds", 1),
    ],
)
def test_bad_values_are_refused_naming_the_key(key: str, value: object) -> None:
    with pytest.raises(errors.ConfigError, match=key):
        settings.build(TuneConfig, {key: value}, source="test")
