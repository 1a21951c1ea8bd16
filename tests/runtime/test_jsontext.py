from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors, jsontext


def test_a_json_value_is_read() -> None:
    assert jsontext.loads(b'{"a": [1, 2.5, "x", null]}') == {"a": [1, 2.5, "x", None]}
    assert jsontext.loads("7") == 7


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ('{"a": [1, 2}', "malformed JSON: Expecting ',' delimiter at character 11"),
        (b'{"a": "caf\xe9"}', "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
        ("[" + "9" * 5000 + "]", "a number too long to read"),
    ],
)
def test_text_that_is_no_json_is_a_source_error_saying_why(data: str | bytes, reason: str) -> None:
    with pytest.raises(jsontext.JsonError) as caught:
        jsontext.loads(data)
    assert str(caught.value) == reason
    assert isinstance(caught.value, errors.SourceError)


@given(st.binary() | st.text())
def test_any_input_is_a_value_or_a_json_error(data: bytes | str) -> None:
    try:
        jsontext.loads(data)
    except jsontext.JsonError as exc:
        assert str(exc)
