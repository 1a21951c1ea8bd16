from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import ApiConfig
from lens.runtime.config.api import is_loopback


def test_the_api_listens_on_loopback_with_no_token_by_default() -> None:
    default = ApiConfig()
    assert (default.host, default.port, default.token_file) == ("127.0.0.1", 8080, "")
    assert is_loopback(default.host)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "api.example", ""])
def test_hosts_that_reach_beyond_this_machine(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("key", "value"), [("port", 70000), ("max_page_size", 0), ("graceful_shutdown_seconds", -1)]
)
def test_values_out_of_range_are_refused(key: str, value: object) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(ApiConfig, {key: value}, source="test")
    assert caught.value.key == key
