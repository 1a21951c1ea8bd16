from __future__ import annotations

import dataclasses
from typing import Literal

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors, settings
from lens.runtime.settings import EnvText, Secret, setting


def _even(value: object) -> str | None:
    return None if isinstance(value, int) and value % 2 == 0 else "expected an even number"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Inner:
    """A section for tests."""

    count: int = setting(2, "A count.", minimum=0, maximum=10)
    ratio: float = setting(0.5, "A ratio.", minimum=0, maximum=1)
    flag: bool = setting(False, "A flag.")
    mode: Literal["a", "b"] = setting("a", "A mode.")
    names: tuple[str, ...] = setting((), "Some names.")
    token: Secret = setting(Secret(""), "A token.")
    even: int = setting(4, "An even number.", check=_even)
    url: str = setting("x", "A URL.", redact=lambda v: v.replace("pw", "***"))
    maybe: int | None = setting(None, "An optional number.")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outer:
    inner: Inner = setting(Inner(), "The inner section.")


def _build(data: object, **kwargs: object) -> Outer:
    return settings.build(Outer, data, source="f.yaml", **kwargs)  # type: ignore[arg-type]


def test_defaults_when_nothing_is_given() -> None:
    assert _build({}) == Outer()


def test_values_of_every_type_convert() -> None:
    built = _build(
        {
            "inner": {
                "count": 3,
                "ratio": 1,
                "flag": True,
                "mode": "b",
                "names": ["x", "y"],
                "token": "s3cret",
                "even": 8,
                "maybe": 7,
            }
        }
    )
    assert built.inner == Inner(
        count=3,
        ratio=1.0,
        flag=True,
        mode="b",
        names=("x", "y"),
        token=Secret("s3cret"),
        even=8,
        maybe=7,
    )
    assert isinstance(built.inner.ratio, float)


def test_environment_text_is_parsed_to_the_field_type() -> None:
    built = _build(
        {
            "inner": {
                "count": EnvText(" 9 "),
                "ratio": EnvText("0.25"),
                "flag": EnvText("yes"),
                "mode": EnvText("b"),
                "names": EnvText("a, b,,c"),
                "maybe": EnvText("3"),
            }
        }
    )
    assert (built.inner.count, built.inner.ratio, built.inner.flag) == (9, 0.25, True)
    assert built.inner.names == ("a", "b", "c")
    assert built.inner.mode == "b"
    assert built.inner.maybe == 3


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"inner": {"cont": 1}}, "inner.cont", "unknown key (expected one of: count, even,"),
        ({"other": {}}, "other", "unknown key (expected one of: inner)"),
        ({"inner": {"count": "3"}}, "inner.count", "expected an integer, got string '3'"),
        ({"inner": {"count": True}}, "inner.count", "expected an integer, got boolean true"),
        ({"inner": {"count": 11}}, "inner.count", "expected a number from 0 to 10, got 11"),
        ({"inner": {"ratio": "x"}}, "inner.ratio", "expected a number, got string 'x'"),
        ({"inner": {"flag": "yes"}}, "inner.flag", "expected true or false, got string 'yes'"),
        ({"inner": {"mode": "c"}}, "inner.mode", "expected one of: a, b; got string 'c'"),
        ({"inner": {"names": "x"}}, "inner.names", "expected a list of strings"),
        ({"inner": {"names": [1]}}, "inner.names", "expected a list of strings"),
        ({"inner": {"url": 5}}, "inner.url", "expected a string, got number 5 (quote it in YAML)"),
        ({"inner": {"even": 3}}, "inner.even", "expected an even number, got number 3"),
        ({"inner": 5}, "inner", "expected a mapping, got number 5"),
        ({"inner": {"count": EnvText("many")}}, "inner.count", "expected an integer, got 'many'"),
        (
            {"inner": {"flag": EnvText("maybe")}},
            "inner.flag",
            "expected true or false, got 'maybe'",
        ),
    ],
)
def test_bad_values_name_the_key_and_what_was_expected(
    data: object, key: str, expected: str
) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        _build(data)
    assert caught.value.key == key
    assert caught.value.source == "f.yaml"
    assert caught.value.expected.startswith(expected)
    assert str(caught.value).startswith(f"f.yaml: {key}: ")


def test_an_overridden_key_names_its_own_source() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        _build(
            {"inner": {"count": EnvText("x")}}, origins={"inner.count": "environment variable X"}
        )
    assert caught.value.source == "environment variable X"


def test_to_plain_redacts_secrets_and_urls_unless_told() -> None:
    built = Outer(inner=Inner(token=Secret("s3cret"), url="http://u:pw@h", names=("a",)))
    plain = settings.to_plain(built)
    assert plain["inner"]["token"] == "***"
    assert plain["inner"]["url"] == "http://u:***@h"
    assert plain["inner"]["names"] == ["a"]
    assert "s3cret" not in yaml.safe_dump(plain)
    revealed = settings.to_plain(built, redact=False)
    assert revealed["inner"]["token"] == "s3cret"
    assert settings.to_plain(Outer())["inner"]["token"] == ""


def test_secret_is_never_shown_by_repr_or_str() -> None:
    secret = Secret("hunter2")
    assert "hunter2" not in repr(secret)
    assert "hunter2" not in str(secret)
    assert "hunter2" not in f"{secret}"
    assert secret.reveal() == "hunter2"
    assert secret == Secret("hunter2")
    assert not Secret("")


def test_leaf_keys_lists_every_key_in_order() -> None:
    assert settings.leaf_keys(Outer) == [
        "inner.count",
        "inner.ratio",
        "inner.flag",
        "inner.mode",
        "inner.names",
        "inner.token",
        "inner.even",
        "inner.url",
        "inner.maybe",
    ]


def test_example_documents_every_key_and_loads_back_to_the_defaults() -> None:
    text = settings.render_example(Outer, header="Header line.")
    assert text.startswith("# Header line.\n")
    assert "# The inner section.\ninner:\n" in text
    assert "  # A count.\n  count: 2\n" in text
    data = yaml.safe_load(text)
    assert _build(data) == Outer()


def _no_at(value: object) -> str | None:
    return "expected no @" if isinstance(value, str) and "@" in value else None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Places:
    """A section of paths and a checked secret-bearing link, for tests."""

    home: str = setting("", "A directory.", path=True)
    name: str = setting("", "Not a path.")
    link: str = setting(
        "", "A link.", check=_no_at, redact=lambda v: v.replace("pw", "***"), path=True
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Site:
    places: Places = setting(Places(), "The places.")


def test_leaf_keys_lists_the_keys_declared_paths_when_told() -> None:
    assert settings.leaf_keys(Site, paths_only=True) == ["places.home", "places.link"]
    assert settings.leaf_keys(Outer, paths_only=True) == []


@pytest.mark.parametrize("value", ["pw@host", EnvText("pw@host")])
def test_a_refused_value_is_shown_redacted(value: str) -> None:
    # A database URL that failed its check was printed whole, password included (issue 16, #11).
    with pytest.raises(errors.ConfigError) as caught:
        settings.build(Site, {"places": {"link": value}}, source="f.yaml")
    assert caught.value.expected == "expected no @, got " + (
        "'***@host'" if isinstance(value, EnvText) else "string '***@host'"
    )


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"inner": {"url": "a\x00b"}}, "inner.url", "expected text without a NUL character"),
        ({"inner": {"url": EnvText("a\x00")}}, "inner.url", "expected text without a NUL"),
        ({"inner": {"names": ["ok", "\x00"]}}, "inner.names", "expected text without a NUL"),
        ({"inner": {"token": "pw\x00"}}, "inner.token", "expected text without a NUL"),
        ({"inner": {"url": "\ud800"}}, "inner.url", "expected UTF-8 text (character 1 cannot"),
        ({"inner": {"names": EnvText("a,\udcff")}}, "inner.names", "expected UTF-8 text"),
    ],
)
def test_no_text_setting_holds_a_nul_or_a_lone_surrogate(
    data: object, key: str, expected: str
) -> None:
    # A NUL in a path or host made open() or bind() raise ValueError far from the config, and a
    # lone surrogate made `lens config check` fail to print (issue 16, #11).
    with pytest.raises(errors.ConfigError) as caught:
        _build(data)
    assert caught.value.key == key
    assert caught.value.expected.startswith(expected)


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"inner": {"count": 10**400}}, "inner.count", "expected a number from 0 to 10, got 1000"),
        ({"inner": {"ratio": 10**400}}, "inner.ratio", "expected a finite number, got number 1000"),
        ({"inner": {"ratio": -(10**400)}}, "inner.ratio", "expected a finite number"),
        ({"inner": {"count": EnvText("9" * 400)}}, "inner.count", "expected a number from 0"),
        ({"inner": {"ratio": EnvText("9" * 400)}}, "inner.ratio", "expected a finite number"),
        ({"inner": {"count": 2.0}}, "inner.count", "expected an integer, got number 2.0"),
    ],
)
def test_integers_too_large_for_a_float_are_refused(data: object, key: str, expected: str) -> None:
    # math.isfinite(10**400) and float(10**400) raised OverflowError: a traceback (issue 16, #11).
    with pytest.raises(errors.ConfigError) as caught:
        _build(data)
    assert caught.value.key == key
    assert caught.value.expected.startswith(expected)
    assert len(str(caught.value)) < 200


def test_an_unknown_key_that_is_no_plain_text_is_quoted() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        _build({"inner": {"a\nb": 1}})
    assert caught.value.key == "inner.'a\\nb'"
    assert "\n" not in str(caught.value)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),
    st.binary(max_size=8),
    st.text().map(EnvText),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@given(st.dictionaries(st.sampled_from(settings.leaf_keys(Outer)), _VALUES))
def test_any_values_build_settings_or_one_config_error(chosen: dict[str, object]) -> None:
    data: dict[str, dict[str, object]] = {"inner": {}}
    for key, value in chosen.items():
        data["inner"][key.removeprefix("inner.")] = value
    try:
        built = _build(data)
    except errors.ConfigError as exc:
        assert exc.key.startswith("inner")
        assert "\n" not in str(exc)
    else:
        assert isinstance(built.inner, Inner)
