from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import MetricsConfig


def test_no_query_api_is_configured_by_default() -> None:
    assert MetricsConfig().prometheus_url == ""


def test_a_query_api_is_an_http_url() -> None:
    built = settings.build(
        MetricsConfig, {"prometheus_url": "http://vm:8428/select/0/prometheus"}, source="test"
    )
    assert built.prometheus_url == "http://vm:8428/select/0/prometheus"


@pytest.mark.parametrize("value", ["prometheus:9090", "ftp://x", 9090])
def test_a_query_api_that_is_not_an_http_url_is_refused(value: object) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(MetricsConfig, {"prometheus_url": value}, source="test")
    assert caught.value.key == "prometheus_url"
