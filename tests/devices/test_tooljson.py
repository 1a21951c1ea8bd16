"""Tool JSON decoded leniently: any text is a value or a SourceError, any value a field or None."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import tooljson
from lens.runtime import errors

# Any text, lone surrogates included now and then (JSON's "\ud800" escapes produce them).
TEXTS = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.sampled_from(["\ud800", "a\udfffb", "\0", " ", "N/A", "1e999", "0x1f", "42 MB"]),
)
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), TEXTS, st.sampled_from([2**64, -(2**63)])
)
VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": [1, 2}', "malformed JSON: Expecting"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[" + "9" * 5000 + "]", "a number too long to read"),
    ],
)
def test_text_that_is_no_usable_json_is_a_source_error(text: str, message: str) -> None:
    # Issue 16, point 9: deep nesting raised RecursionError, 5000 digits a ValueError.
    with pytest.raises(errors.SourceError, match=message):
        tooljson.document(text, "amd-smi")


def test_special_numbers_are_values() -> None:
    assert tooljson.document("[1e999, NaN]", "rdma")[0] == math.inf


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("MI300X", "MI300X"),
        ("  gfx942 ", "gfx942"),
        (42, "42"),
        (1.5, "1.5"),
        ("", None),
        ("   ", None),
        (None, None),
        (True, None),
        (["MB"], None),
        ({"value": 1}, None),
        (math.inf, None),
        ("a\ud800b", "a?b"),
        ("a\0b", "ab"),
    ],
)
def test_text_fields(value: object, expected: str | None) -> None:
    assert tooljson.text(value) == expected


def test_text_is_cut_to_a_label_sized_length() -> None:
    assert tooljson.text("x" * 5000) == "x" * tooljson.TEXT_LIMIT


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (42, 42),
        ("42", 42),
        ("42 MB", 42),
        ("0x1002", 0x1002),
        (3.0, 3),
        (-1, -1),
        (2**64 - 1, 2**64 - 1),
        (" ", None),  # issue 16, point 9: a blank number raised IndexError
        ("", None),
        (2**64, None),
        (-(2**63) - 1, None),
        (1.5, None),
        (math.inf, None),
        (math.nan, None),
        (True, None),
        ([1], None),
        ("9" * 5000, None),
        ("²", None),
    ],
)
def test_integer_fields(value: object, expected: int | None) -> None:
    assert tooljson.integer(value) == expected


def test_integer_bounds_are_the_callers() -> None:
    assert tooljson.integer(-1, lowest=0) is None
    assert tooljson.integer(7, highest=6) is None


def test_mapping() -> None:
    assert tooljson.mapping({"a": 1}) == {"a": 1}
    assert tooljson.mapping([1]) == {} and tooljson.mapping("x") == {}


@given(st.one_of(TEXTS, VALUES.map(lambda v: json.dumps(v)[: len(json.dumps(v)) // 2 + 1])))
def test_any_text_is_a_value_or_a_source_error(text: str) -> None:
    try:
        tooljson.document(text, "amd-smi")
    except errors.SourceError as exc:
        assert str(exc).startswith("amd-smi printed")


@given(VALUES)
def test_any_value_is_a_label_safe_text_or_none(value: object) -> None:
    text = tooljson.text(value)
    if text is not None:
        assert text == text.strip() and text and "\0" not in text
        assert len(text) <= tooljson.TEXT_LIMIT
        text.encode()  # a lone surrogate would raise here, and in every /metrics scrape


@given(VALUES)
def test_any_value_is_a_64_bit_integer_or_none(value: object) -> None:
    number = tooljson.integer(value)
    assert number is None or (type(number) is int and tooljson.LOWEST <= number <= 2**64 - 1)
    if number is not None:
        float(number)  # what rendering it does
