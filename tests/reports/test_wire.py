"""GPU- and port-minutes on the wire: what the agent sends is what the server reads, unknown
stays unknown, and a record the store could not hold is refused by name."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import wire
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute
from lens.reports.samples import Holder
from lens.runtime.wirevalues import WireError

# Texts the store holds as they are (the agent cuts others, as the next tests show).
names = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1, max_size=20
)
maybe_float = st.none() | st.floats(allow_nan=False, allow_infinity=False)
starts = st.integers(min_value=0, max_value=4_000_000_000).map(lambda m: m * 60 // 60 * 60)
holders = st.builds(
    Holder,
    cluster=st.just(""),
    namespace=names,
    pod_name=names,
    container=names,
    pod_uid=names,
    container_id=names,
)
shares = st.builds(
    Share,
    holder=holders,
    held_seconds=st.floats(min_value=0, max_value=60),
    seconds=st.floats(min_value=0, max_value=60),
)
gpu_minutes = st.builds(
    GpuMinute,
    start=starts,
    uuid=names,
    index=st.integers(min_value=0, max_value=63),
    pci_bus_id=names,
    samples=st.integers(min_value=0, max_value=600),
    expected_samples=st.integers(min_value=1, max_value=600),
    utilization_mean_ratio=maybe_float,
    utilization_max_ratio=maybe_float,
    memory_activity_mean_ratio=maybe_float,
    vram_used_mean_bytes=maybe_float,
    vram_used_max_bytes=st.none() | st.integers(min_value=0, max_value=2**50),
    power_mean_watts=maybe_float,
    energy_joules=maybe_float,
    temperatures_max_celsius=st.lists(
        st.tuples(names, st.floats(allow_nan=False, allow_infinity=False)), max_size=3
    ).map(tuple),
    held_by=st.builds(
        Attribution,
        shares=st.lists(shares, max_size=3).map(tuple),
        idle_seconds=st.floats(min_value=0, max_value=60),
    ),
)
counts = st.none() | st.integers(min_value=0, max_value=2**63 - 1)
named_counts = st.lists(st.tuples(names, counts), max_size=4).map(tuple)
port_minutes = st.builds(
    PortMinute,
    start=starts,
    device=names,
    port=st.integers(min_value=1, max_value=4),
    samples=st.integers(min_value=0, max_value=600),
    expected_samples=st.integers(min_value=1, max_value=600),
    transmit_bytes=counts,
    receive_bytes=counts,
    transmit_packets=counts,
    receive_packets=counts,
    counters=named_counts,
    hw_counters=named_counts,
    counter_resets=st.integers(min_value=0, max_value=100),
)


def _sent(record: pb.Record) -> pb.Record:
    """As the server gets it: serialized and parsed again."""
    return pb.Record.FromString(record.SerializeToString())


@given(st.lists(gpu_minutes, max_size=4))
def test_gpu_minutes_arrive_as_sent(minutes: list[GpuMinute]) -> None:
    record = _sent(wire.gpu_minutes_record(minutes))
    assert record.WhichOneof("body") == "gpu_minutes" or not minutes
    assert wire.gpu_minutes(record) == tuple(minutes)


@given(st.lists(port_minutes, max_size=4))
def test_port_minutes_arrive_as_sent(minutes: list[PortMinute]) -> None:
    assert wire.port_minutes(_sent(wire.port_minutes_record(minutes))) == tuple(minutes)


@given(st.lists(gpu_minutes, min_size=1, max_size=4))
def test_a_correction_arrives_as_the_minutes_it_corrects_and_says_so(
    minutes: list[GpuMinute],
) -> None:
    """A correction is the minute sent again whole: read as any minute (a server older than the
    flag stores it so), the flag only counted."""
    corrected = _sent(wire.gpu_minutes_record(minutes, correction=True))
    assert wire.gpu_minutes(corrected) == tuple(minutes)
    assert wire.corrections(corrected) == len(minutes)
    assert wire.corrections(_sent(wire.gpu_minutes_record(minutes))) == 0
    unflagged = pb.Record.FromString(corrected.SerializeToString())
    for item in unflagged.gpu_minutes.items:
        item.ClearField("correction")  # as an agent older than the flag sends it
    assert unflagged.gpu_minutes == _sent(wire.gpu_minutes_record(minutes)).gpu_minutes


def _minute(**changes: object) -> GpuMinute:
    fields: dict[str, object] = {
        "start": 600,
        "uuid": "GPU-1",
        "index": 0,
        "pci_bus_id": "0000:0c:00.0",
        "samples": 60,
        "expected_samples": 60,
        "held_by": Attribution(shares=(), idle_seconds=60.0),
    }
    fields.update(changes)
    return GpuMinute(**fields)  # type: ignore[arg-type]


def test_unknown_figures_stay_unknown_and_a_figure_that_is_not_finite_becomes_unknown() -> None:
    sent = _minute(power_mean_watts=math.nan, energy_joules=None, utilization_mean_ratio=0.0)
    (received,) = wire.gpu_minutes(_sent(wire.gpu_minutes_record([sent])))
    assert received.power_mean_watts is None
    assert received.energy_joules is None
    assert received.utilization_mean_ratio == 0.0  # a known 0 is not unknown


def test_texts_too_long_for_their_columns_are_cut_by_the_agent() -> None:
    sent = _minute(uuid="G" * 500)
    (received,) = wire.gpu_minutes(_sent(wire.gpu_minutes_record([sent])))
    assert received.uuid == "G" * wire.UUID_CHARS


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda m: setattr(m, "start", 61), "minute start not on a minute"),
        (lambda m: setattr(m, "start", 10**13), "time out of range"),
        (lambda m: setattr(m, "uuid", "x" * 200), "text too long"),
        (lambda m: setattr(m, "power_mean_watts", math.inf), "number not finite"),
        (lambda m: setattr(m, "vram_used_max_bytes", -1), "count out of range"),
    ],
)
def test_the_server_refuses_a_minute_the_store_cannot_hold(change: object, reason: str) -> None:
    record = wire.gpu_minutes_record([_minute()])
    change(record.gpu_minutes.items[0])  # type: ignore[operator]
    with pytest.raises(WireError) as caught:
        wire.gpu_minutes(_sent(record))
    assert caught.value.reason == reason


def test_a_port_count_past_a_signed_64_bit_column_is_refused() -> None:
    record = wire.port_minutes_record(
        [PortMinute(start=0, device="mlx5_0", port=1, samples=1, expected_samples=60)]
    )
    record.port_minutes.items[0].transmit_bytes = 2**64 - 1
    with pytest.raises(WireError, match="count out of range: transmit_bytes"):
        wire.port_minutes(_sent(record))


def test_the_agent_leaves_a_count_no_column_holds_unknown() -> None:
    sent = PortMinute(
        start=0,
        device="mlx5_0",
        port=1,
        samples=1,
        expected_samples=60,
        transmit_bytes=2**64,
        counters=(("symbol_error", 2**70),),
    )
    (received,) = wire.port_minutes(_sent(wire.port_minutes_record([sent])))
    assert received.transmit_bytes is None
    assert received.counters == (("symbol_error", None),)
