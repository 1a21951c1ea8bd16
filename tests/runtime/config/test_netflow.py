from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import NetflowConfig


def test_defaults() -> None:
    config = NetflowConfig()
    assert (config.interval_seconds, config.top_peers, config.series_ttl_seconds) == (
        5.0,
        100,
        600.0,
    )


def test_cidrs_are_read() -> None:
    built = settings.build(
        NetflowConfig,
        {"pod_cidrs": ["10.244.0.0/16", "fd00::/56"], "service_cidrs": ["10.96.0.0/12"]},
        source="t",
    )
    assert built.pod_cidrs == ("10.244.0.0/16", "fd00::/56")


@pytest.mark.parametrize(("key", "value"), [("pod_cidrs", ["10.0.0.0/33"]), ("top_peers", 0)])
def test_bad_values_name_the_key(key: str, value: object) -> None:
    with pytest.raises(errors.ConfigError, match=key):
        settings.build(NetflowConfig, {key: value}, source="t")
