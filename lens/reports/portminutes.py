"""Each RDMA port's traffic and errors per UTC minute, from the node agent's collection cycle.

The agent feeds every PortSample (samples.py) to a PortMinuteSummariser and gets a PortMinute
back when a minute completes: bytes and packets each way and the error and discard counters'
increases, each counter's wraps and resets resolved by counters.py and split at the minute's
boundaries by timeline.Tally. The rules are in docs/reports.md.
"""

from __future__ import annotations

import dataclasses

from lens.reports import counters, minutes
from lens.reports.counters import Width
from lens.reports.samples import PortSample
from lens.reports.timeline import MINUTE, Tally

PortKey = tuple[str, int]  # (device, port)
# Faster than any port sold (2 Tb/s), the bound on a port whose rate is unknown.
CEILING_BYTES_PER_SECOND = 2.5e11
# The smallest InfiniBand packet (LRH, BTH, ICRC and VCRC: 26 bytes) bounds packets, and
# errors, per second by the byte rate.
MIN_PACKET_BYTES = 26
# Readings are stamped when the cycle starts, not when each counter is read: one second of
# slack keeps a busy link's increase within its bound.
SLACK_SECONDS = 1.0

# rdma.py multiplies port_xmit_data and port_rcv_data (64-bit with extended PMA counters; 32-bit
# ones saturate and rdma.py leaves them out) by 4.
DATA_WIDTH = Width(bits=64, unit=4)
WIDTH_64 = Width(bits=64)
# mlx5's hw_counters are 32-bit queue counters shown as 64-bit numbers: they wrap at 2^32.
HW_COUNTER_WIDTH = Width(bits=32)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PortWidths:
    """The widths of a port's counters, as the node agent reads them."""

    data: Width = DATA_WIDTH
    packets: Width = WIDTH_64
    counters: tuple[tuple[str, Width], ...] = counters.PMA_COUNTERS
    other_counters: Width = WIDTH_64  # PMA counters not named in `counters`
    hw_counters: Width = HW_COUNTER_WIDTH


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PortMinute:
    """One RDMA port over one UTC minute: counter increases, None where unknown."""

    start: int  # epoch seconds, a multiple of 60
    device: str
    port: int
    samples: int
    expected_samples: int
    transmit_bytes: int | None = None
    receive_bytes: int | None = None
    transmit_packets: int | None = None
    receive_packets: int | None = None
    counters: tuple[tuple[str, int | None], ...] = ()
    hw_counters: tuple[tuple[str, int | None], ...] = ()
    # Counter readings that showed a reset (the figure counts from it) or a jump, one per counter.
    counter_resets: int = 0

    @property
    def missing_samples(self) -> int:
        return max(0, self.expected_samples - self.samples)


class _Track:
    """One counter of a port: its last reading, its tally and the staged reading."""

    __slots__ = ("next_increase", "next_time", "next_value", "read", "tally", "value", "width")

    def __init__(self, width: Width) -> None:
        self.width = width
        self.value: int | None = None
        self.tally = Tally(whole=True)
        self.read = 0  # readings in the open minute
        self.next_time: float | None = None
        self.next_value = 0
        self.next_increase: int | None = None

    def stage(self, time: float, value: int, per_second: float) -> bool:
        """Work out the increase to `value`; True when the counter was reset or jumped."""
        if value < 0:
            return False  # not a counter's reading: left out, like a counter not read
        self.next_time, self.next_value, self.next_increase = time, value, None
        last = self.tally.last
        if self.value is None or last is None:
            return False
        bound = per_second * (time - last + SLACK_SECONDS)
        self.next_increase, irregular = counters.increase(
            self.value, value, width=self.width, bound=bound
        )
        return irregular

    def commit(self) -> None:
        if self.next_time is not None:
            self.tally.advance(self.next_time, self.next_increase)
            self.value = self.next_value
            self.read += 1
            self.next_time = None

    def close(self, end: float, limit: float) -> int | None:
        figure = self.tally.close(
            end, time=self.next_time, increase=self.next_increase, limit=limit
        )
        self.read = 0
        return None if figure is None else int(figure)


class _Port(minutes.Device):
    __slots__ = ("counters", "hw_counters", "next_resets", "resets", "traffic")

    def __init__(self, start: int, widths: PortWidths) -> None:
        super().__init__(start)
        data, packets = widths.data, widths.packets
        self.traffic = (_Track(data), _Track(data), _Track(packets), _Track(packets))
        self.counters: dict[str, _Track] = {}
        self.hw_counters: dict[str, _Track] = {}
        self.resets = 0  # in the open minute
        self.next_resets = 0  # in the staged reading


DEFAULT_WIDTHS = PortWidths()


class PortMinuteSummariser(minutes.MinuteSummariser[PortKey, PortSample, _Port, PortMinute]):
    """Every RDMA port of a node, per minute."""

    def __init__(
        self,
        *,
        interval_seconds: float,
        widths: PortWidths = DEFAULT_WIDTHS,
        silent_minutes: int = minutes.SILENT_MINUTES,
    ) -> None:
        super().__init__(interval_seconds=interval_seconds, silent_minutes=silent_minutes)
        self._widths = widths
        self._pma_widths = dict(widths.counters)

    def _key(self, sample: PortSample) -> PortKey:
        return (sample.device, sample.port)

    def _start(self, key: PortKey, start: int) -> _Port:
        return _Port(start, self._widths)

    def _stage(self, device: _Port, sample: PortSample) -> None:
        time = sample.time
        # A port that is down may show a rate of 0: that bounds nothing, like an unknown one.
        byte_rate = sample.rate_bytes_per_second or CEILING_BYTES_PER_SECOND
        packet_rate = byte_rate / MIN_PACKET_BYTES
        traffic = (
            (sample.transmit_bytes, byte_rate),
            (sample.receive_bytes, byte_rate),
            (sample.transmit_packets, packet_rate),
            (sample.receive_packets, packet_rate),
        )
        resets = 0
        for track, (value, per_second) in zip(device.traffic, traffic, strict=True):
            if value is not None:
                resets += track.stage(time, value, per_second)
        for name, value in sample.counters:
            known = device.counters.get(name)
            if known is None:
                width = self._pma_widths.get(name, self._widths.other_counters)
                known = device.counters[name] = _Track(width)
            resets += known.stage(time, value, packet_rate)
        for name, value in sample.hw_counters:
            hw = device.hw_counters.get(name)
            if hw is None:
                hw = device.hw_counters[name] = _Track(self._widths.hw_counters)
            resets += hw.stage(time, value, packet_rate)
        device.next_resets = resets

    def _commit(self, device: _Port, sample: PortSample) -> None:
        device.resets += device.next_resets
        device.next_resets = 0
        for track in device.traffic:
            track.commit()
        for track in device.counters.values():
            track.commit()
        for track in device.hw_counters.values():
            track.commit()

    def _emit(self, key: PortKey, device: _Port) -> PortMinute:
        limit = self.cadence.bracket_seconds
        end = device.open + MINUTE
        transmit_bytes, receive_bytes, transmit_packets, receive_packets = (
            track.close(end, limit) for track in device.traffic
        )
        minute = PortMinute(
            start=device.open,
            device=key[0],
            port=key[1],
            samples=device.samples,
            expected_samples=self.cadence.expected_samples,
            transmit_bytes=transmit_bytes,
            receive_bytes=receive_bytes,
            transmit_packets=transmit_packets,
            receive_packets=receive_packets,
            counters=_close_named(device.counters, end, limit),
            hw_counters=_close_named(device.hw_counters, end, limit),
            counter_resets=device.resets,
        )
        device.resets = 0
        return minute


def _close_named(
    tracks: dict[str, _Track], end: float, limit: float
) -> tuple[tuple[str, int | None], ...]:
    """Each named counter's figure; a counter not read in the minute, nor just after it, is
    reported unknown once and then forgotten (the driver no longer shows it)."""
    figures = []
    for name in sorted(tracks):
        track = tracks[name]
        unread = track.read == 0 and track.next_time is None
        figures.append((name, track.close(end, limit)))
        if unread:
            del tracks[name]
    return tuple(figures)
