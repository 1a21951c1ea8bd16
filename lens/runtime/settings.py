"""Typed settings: frozen dataclasses built from YAML/env values, redacted and documented.

runtime/config/ declares the sections with `setting(...)`; this module turns plain data into
those dataclasses (naming the key and source of the first bad value), back into plain data with
secrets redacted, and into the commented example file.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union

import yaml

from lens.runtime import errors

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")

REDACTED = "***"

Check = Callable[[Any], "str | None"]
"""Returns what was expected when the value is impossible, else None."""


class Secret:
    """A value that is never printed; `reveal()` returns it for the one place that needs it."""

    __slots__ = ("_value",)

    def __init__(self, value: str = "") -> None:
        self._value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret('***')" if self._value else "Secret('')"

    __str__ = __repr__


class EnvText(str):
    """A raw string from an environment variable, converted to the field's type when built."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Meta:
    help: str
    minimum: float | None = None
    maximum: float | None = None
    check: Check | None = None
    redact: Callable[[str], str] | None = None
    path: bool = False


def setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    check: Check | None = None,
    redact: Callable[[str], str] | None = None,
    path: bool = False,
) -> Any:
    """Declare one config key: its default, one-sentence help and the limits of its value.

    `path=True` marks a file or directory: config/loading.py expands its `~` or `~user`.
    """
    meta = _Meta(help=help, minimum=minimum, maximum=maximum, check=check, redact=redact, path=path)
    return dataclasses.field(default=default, metadata={"lens": meta})


def _meta(field: dataclasses.Field[Any]) -> _Meta:
    meta = field.metadata.get("lens")
    if not isinstance(meta, _Meta):
        raise TypeError(f"field {field.name} is not declared with setting()")
    return meta


_SHOWN_CHARACTERS = 100


def _cut(text: str) -> str:
    """An error line's copy of a value: a long one (a 5,000-digit number, a pasted file) is cut."""
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return f"{text[:_SHOWN_CHARACTERS]}... ({len(text)} characters)"


def _describe(value: object) -> str:
    if isinstance(value, EnvText):
        return _cut(repr(str(value)))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {_cut(repr(value))}"
    if isinstance(value, str):
        return f"string {_cut(repr(value))}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _redacted(value: object, meta: _Meta) -> object:
    """The value as an error may show it: a URL's password hidden like in `lens config check`."""
    if meta.redact is None or not isinstance(value, str):
        return value
    shown = meta.redact(str(value))
    return EnvText(shown) if isinstance(value, EnvText) else shown


class _Builder:
    """Converts plain data into a settings dataclass; remembers where each key came from."""

    def __init__(self, *, source: str, origins: Mapping[str, str]) -> None:
        self._source = source
        self._origins = origins

    def fail(self, key: str, expected: str) -> errors.ConfigError:
        return errors.ConfigError(
            source=self._origins.get(key, self._source), key=key, expected=expected
        )

    def build(self, cls: type[T], data: object, prefix: str) -> T:
        if not isinstance(data, Mapping):
            key = prefix.rstrip(".") or "(top level)"
            raise self.fail(key, f"expected a mapping, got {_describe(data)}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        hints = typing.get_type_hints(cls)
        for key in data:
            if key not in fields:
                choices = ", ".join(sorted(fields))
                shown = key if isinstance(key, str) and key.isprintable() else repr(key)
                raise self.fail(f"{prefix}{shown}", f"unknown key (expected one of: {choices})")
        values = {}
        for name, field in fields.items():
            if name in data:
                key = f"{prefix}{name}"
                values[name] = self.convert(hints[name], data[name], key, field)
        return cls(**values)

    def convert(self, hint: Any, value: object, key: str, field: dataclasses.Field[Any]) -> Any:
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            return self.build(hint, value, f"{key}.")
        converted = self._convert_plain(hint, value, key)
        meta = _meta(field)
        if isinstance(converted, int | float) and not isinstance(converted, bool):
            self._check_range(converted, meta, key)
        if meta.check is not None:
            problem = meta.check(converted)
            if problem is not None:
                raise self.fail(key, f"{problem}, got {_describe(_redacted(value, meta))}")
        return converted

    def _check_range(self, number: float, meta: _Meta, key: str) -> None:
        low, high = meta.minimum, meta.maximum
        if (low is not None and number < low) or (high is not None and number > high):
            if low is not None and high is not None:
                bounds = f"from {low:g} to {high:g}"
            elif low is not None:
                bounds = f">= {low:g}"
            else:
                bounds = f"<= {high:g}"
            raise self.fail(key, f"expected a number {bounds}, got {_cut(repr(number))}")

    def _convert_plain(self, hint: Any, value: object, key: str) -> Any:
        origin = typing.get_origin(hint)
        if origin in (Union, types.UnionType):
            options = typing.get_args(hint)
            if value is None and type(None) in options:
                return None
            (inner,) = [o for o in options if o is not type(None)]
            return self._convert_plain(inner, value, key)
        if origin is Literal:
            return self._literal(typing.get_args(hint), value, key)
        if origin is tuple:
            return self._tuple(value, key)
        converter = _SCALARS.get(hint)
        if converter is None:
            raise TypeError(f"unsupported settings type {hint!r} at {key}")
        return converter(self, value, key)

    def _literal(self, choices: tuple[object, ...], value: object, key: str) -> object:
        text = str(value) if isinstance(value, EnvText) else value
        if text in choices:
            return text
        listed = ", ".join(str(c) for c in choices)
        raise self.fail(key, f"expected one of: {listed}; got {_describe(value)}")

    def _tuple(self, value: object, key: str) -> tuple[str, ...]:
        if isinstance(value, EnvText):
            items = tuple(item.strip() for item in value.split(",") if item.strip())
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            items = tuple(str(v) for v in value)
        else:
            raise self.fail(key, f"expected a list of strings, got {_describe(value)}")
        for item in items:
            self._text(item, key)
        return items

    def _str(self, value: object, key: str) -> str:
        if isinstance(value, str):
            return self._text(str(value), key)
        raise self.fail(key, f"expected a string, got {_describe(value)} (quote it in YAML)")

    def _text(self, text: str, key: str) -> str:
        """No setting is a NUL or a lone surrogate: a path, host or URL with one makes the OS
        or a driver raise far from the config, and printing one fails too."""
        if "\x00" in text:
            raise self.fail(key, "expected text without a NUL character")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise self.fail(
                key, f"expected UTF-8 text (character {exc.start + 1} cannot be encoded)"
            ) from exc
        return text

    def _secret(self, value: object, key: str) -> Secret:
        return Secret(self._str(value, key))

    def _bool(self, value: object, key: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, EnvText):
            word = value.strip().lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
        raise self.fail(key, f"expected true or false, got {_describe(value)}")

    def _int(self, value: object, key: str) -> int:
        return int(self._number(value, key, int, "an integer"))

    def _float(self, value: object, key: str) -> float:
        return float(self._number(value, key, float, "a number"))

    def _number(self, value: object, key: str, kind: type[int] | type[float], what: str) -> float:
        number: float | None = None
        if isinstance(value, EnvText):
            try:
                number = kind(value.strip())
            except ValueError:
                raise self.fail(key, f"expected {what}, got {_describe(value)}") from None
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if kind is int and isinstance(value, float):
                raise self.fail(key, f"expected {what}, got {_describe(value)}")
            number = value
        if number is None:
            raise self.fail(key, f"expected {what}, got {_describe(value)}")
        if isinstance(number, int):
            if kind is int:
                return number  # exact at any size: a float of it may overflow
            number = _to_float(number)
        if not math.isfinite(number):
            # NaN passes every range check (a NaN interval spins a loop) and infinity is no
            # setting either.
            raise self.fail(key, f"expected a finite number, got {_describe(value)}")
        return number


def _to_float(number: int) -> float:
    """The float nearest an integer; infinity for one beyond float's range (refused later)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

_SCALARS: dict[Any, Callable[[_Builder, object, str], Any]] = {
    str: _Builder._str,
    bool: _Builder._bool,
    int: _Builder._int,
    float: _Builder._float,
    Secret: _Builder._secret,
}


def build(
    cls: type[T], data: object, *, source: str, origins: Mapping[str, str] | None = None
) -> T:
    """Build settings class `cls` from plain data, raising ConfigError on the first bad key.

    `source` names where the data came from; `origins` maps dotted keys to a more precise
    source (the environment variable that overrode a key).
    """
    return _Builder(source=source, origins=origins or {}).build(cls, data, "")


def to_plain(settings: DataclassInstance, *, redact: bool = True) -> dict[str, Any]:
    """The settings as plain data (for YAML or JSON), secrets replaced by `***` unless told."""
    plain: dict[str, Any] = {}
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            plain[field.name] = to_plain(value, redact=redact)
        elif isinstance(value, Secret):
            plain[field.name] = (REDACTED if value else "") if redact else value.reveal()
        elif isinstance(value, tuple):
            plain[field.name] = list(value)
        else:
            meta = _meta(field)
            if redact and meta.redact is not None and isinstance(value, str):
                value = meta.redact(value)
            plain[field.name] = value
    return plain


def leaf_keys(
    cls: type[DataclassInstance], prefix: str = "", *, paths_only: bool = False
) -> list[str]:
    """Every dotted key of settings class `cls` (only those declared `path=True` when told), in
    declaration order."""
    keys: list[str] = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            keys.extend(leaf_keys(hint, f"{prefix}{field.name}.", paths_only=paths_only))
        elif _meta(field).path or not paths_only:
            keys.append(f"{prefix}{field.name}")
    return keys


def _yaml_scalar(value: object) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def render_example(cls: type[Any], *, header: str) -> str:
    """A YAML document of every key with its default, each preceded by its help as comments."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    defaults = to_plain(cls(), redact=False)
    for field in dataclasses.fields(cls):
        section = getattr(cls(), field.name)
        lines.append("")
        lines.append(f"# {_meta(field).help}")
        lines.append(f"{field.name}:")
        for sub in dataclasses.fields(section):
            for help_line in _wrap(_meta(sub).help, width=92):
                lines.append(f"  # {help_line}")
            value = defaults[field.name][sub.name]
            lines.append(f"  {sub.name}: {_yaml_scalar(value)}")
    return "\n".join(lines) + "\n"


def _wrap(text: str, *, width: int) -> list[str]:
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines
