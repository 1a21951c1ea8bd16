from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@pytest.mark.parametrize(
    ("url", "part"),
    [
        ("sqlite:///a%00b.db", "file path"),
        ("postgresql://u:secret@db/d%00b", "database name"),
        ("postgresql://u%00:secret@db/lens", "user"),
        ("mysql://u:se%00cret@db/lens", "password"),
        ("postgresql://u:secret@db/lens?sslmode=%00", "parameter 'sslmode'"),
        ("postgresql://u:secret@db/lens?%00=x", "parameter '\\x00'"),
    ],
)
def test_a_nul_in_any_part_of_the_url_is_refused_when_built(url: str, part: str) -> None:
    # %00 reached the drivers, which raised ValueError: a traceback (issue 16, #12).
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(DatabaseConfig, {"url": url}, source="test")
    assert caught.value.key == "url"
    assert caught.value.expected.startswith(
        f"expected no NUL character (%00) in the URL's {part}, got string '"
    )
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresq://u:secret@db/lens", "'postgresq://u:***@db/lens'"),
        ("postgresql://u:secret@[::1/lens", "'***'"),
        ("postgresql://u:secret@db", "'postgresql://u:***@db'"),
        ("postgresql://u:secret@\uff48\uff0fx/lens", "'***'"),
    ],
)
def test_a_refused_url_is_shown_without_its_password(url: str, shown: str) -> None:
    # The whole URL was printed, password included, when it failed its check (issue 16, #12).
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(DatabaseConfig, {"url": url}, source="test")
    assert caught.value.expected.endswith(f", got string {shown}")
    assert "secret" not in str(caught.value)


_PASSWORD = "hunter2xyz"


@given(st.text(), st.text(), st.sampled_from(["postgresql", "mysql", "sqlite", "oracle"]))
def test_a_url_password_is_never_shown(host: str, rest: str, scheme: str) -> None:
    url = f"{scheme}://lens:{_PASSWORD}@{host}{rest}"
    try:
        built = settings.build(DatabaseConfig, {"url": url}, source="test")
    except errors.ConfigError as exc:
        assert _PASSWORD not in str(exc)
        assert "\n" not in str(exc)
    else:
        assert _PASSWORD not in settings.to_plain(built)["url"]
