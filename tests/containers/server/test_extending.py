"""Extensions claim record bodies once each; the container events' own are not theirs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lens.containers.server.extending import by_body
from lens.proto._generated.lens.v1 import events_pb2 as pb


class _Claims:
    def __init__(self, *bodies: str) -> None:
        self.bodies = frozenset(bodies)

    def decode(self, record: pb.Record) -> object:
        return record

    def prepare(self, node: str, values: Sequence[object]) -> object:
        return values

    def before_write(self, prepared: object) -> None:
        return None

    def write(self, batches: Sequence[tuple[str, object]]) -> None:
        return None

    def committed(self, prepared: object) -> None:
        return None


def test_each_body_has_one_extension() -> None:
    minutes, inventory = _Claims("gpu_minutes", "port_minutes"), _Claims("devices")
    assert by_body([minutes, inventory]) == {
        "gpu_minutes": minutes,
        "port_minutes": minutes,
        "devices": inventory,
    }


@pytest.mark.parametrize(
    "claimed", [[("devices",), ("devices", "other")], [("event",)], [("inventory",)]]
)
def test_a_body_claimed_twice_or_a_container_body_is_refused(
    claimed: list[tuple[str, ...]],
) -> None:
    with pytest.raises(ValueError, match="claimed twice"):
        by_body([_Claims(*bodies) for bodies in claimed])
