"""Values on the event stream: what the agent makes fit, and what the server refuses."""

from __future__ import annotations

import math

import pytest
from google.protobuf import timestamp_pb2
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import wirevalues
from lens.runtime.wirevalues import WireError


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_usable_time_is_always_one_the_server_accepts(seconds: float) -> None:
    stamp = timestamp_pb2.Timestamp()
    wirevalues.set_time(stamp, wirevalues.usable_time(seconds))
    accepted = wirevalues.checked_time(stamp, "t")
    if wirevalues.MIN_TIME <= seconds <= wirevalues.MAX_TIME - 1:
        assert accepted == pytest.approx(seconds, abs=1e-6)


@given(st.text(), st.integers(min_value=0, max_value=50))
def test_a_usable_text_is_always_one_the_server_accepts(value: str, limit: int) -> None:
    fitted = wirevalues.usable_text(value, limit)
    assert wirevalues.checked_text(fitted, limit, "f") == fitted
    fitted.encode()  # no lone surrogate left


def test_the_server_refuses_what_no_column_holds_naming_the_field() -> None:
    with pytest.raises(WireError, match="text too long: pod of 3 characters, over 2"):
        wirevalues.checked_text("abc", 2, "pod")
    with pytest.raises(WireError, match="text with a NUL character: pod"):
        wirevalues.checked_text("a\0", 5, "pod")
    with pytest.raises(WireError, match="number not finite: power") as caught:
        wirevalues.checked_number(math.nan, "power")
    assert caught.value.reason == "number not finite"
    with pytest.raises(WireError, match="time out of range"):
        wirevalues.checked_seconds(wirevalues.MAX_TIME, "start")
    assert wirevalues.checked_seconds(0.0, "start") == 0.0


def test_a_fraction_rounding_up_carries_into_the_seconds() -> None:
    stamp = timestamp_pb2.Timestamp()
    wirevalues.set_time(stamp, 1.9999999999)
    assert (stamp.seconds, stamp.nanos) == (2, 0)
    assert wirevalues.seconds_of(stamp) == 2.0
