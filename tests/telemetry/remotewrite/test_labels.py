"""Label sets in, out of a Relabeler, and encoded exactly as the protobuf classes encode them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.prometheus import types_pb2
from lens.telemetry.remotewrite import labels
from lens.telemetry.remotewrite.protocol import BadRequest
from tests.telemetry.remotewrite.reference import GpuRelabeler


def test_received_labels_are_sorted_bytewise_and_empty_values_dropped() -> None:
    received = [("gpu", "0"), ("__name__", "x"), ("GPU_I_ID", "1"), ("pod", ""), ("é", "e")]
    # Bytewise: uppercase < "_" < lowercase < any non-ASCII (UTF-8 keeps code point order).
    assert labels.checked(received) == (
        ("GPU_I_ID", "1"),
        ("__name__", "x"),
        ("gpu", "0"),
        ("é", "e"),
    )


@pytest.mark.parametrize(
    ("received", "reason"),
    [
        ([("a", "1"), ("", "2")], "empty name"),
        ([("a", "1"), ("a", "2")], "'a' appears twice"),
        ([("a", ""), ("a", "2")], "'a' appears twice"),
    ],
)
def test_invalid_label_sets_say_why(received: list[tuple[str, str]], reason: str) -> None:
    with pytest.raises(BadRequest, match=reason):
        labels.checked(received)


def test_relabeler_answers_are_normalised() -> None:
    answer = [("z", "1"), ("a", "1"), ("a", "2"), ("", "x"), ("e", "")]
    assert labels.normalized(answer) == (("a", "2"), ("z", "1"))


def test_relabelled_says_whether_the_relabeler_changed_anything() -> None:
    relabeler = GpuRelabeler(extra=(("pod", "p"),))
    assert labels.relabelled([("gpu", "0")], relabeler) == ((("gpu", "0"), ("pod", "p")), True)
    assert labels.relabelled([("cpu", "0")], relabeler) == ((("cpu", "0"),), False)
    same = GpuRelabeler(extra=(("gpu", "0"),))
    assert labels.relabelled([("gpu", "0")], same) == ((("gpu", "0"),), False)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=200)


@given(st.lists(st.tuples(_TEXT, _TEXT), max_size=8))
def test_encoding_is_the_protobuf_classes_encoding(pairs: list[tuple[str, str]]) -> None:
    series = types_pb2.TimeSeries(labels=[types_pb2.Label(name=n, value=v) for n, v in pairs])
    assert labels.encode(tuple(pairs)) == series.SerializeToString()
