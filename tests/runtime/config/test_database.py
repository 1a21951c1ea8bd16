from __future__ import annotations

import pytest

from lens.runtime import errors, settings
from lens.runtime.config import DatabaseConfig


def test_the_default_store_is_sqlite_under_the_data_dir() -> None:
    assert DatabaseConfig().url == "sqlite:///lens.db"
    assert DatabaseConfig().migrate_on_start


def test_an_unknown_engine_is_refused_when_built() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(DatabaseConfig, {"url": "oracle://db/lens"}, source="test")
    assert caught.value.key == "url"


def test_a_url_password_is_redacted_when_shown() -> None:
    built = settings.build(DatabaseConfig, {"url": "postgresql://u:pw@db/lens"}, source="test")
    assert settings.to_plain(built)["url"] == "postgresql://u:***@db/lens"
