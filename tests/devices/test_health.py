"""GPU health by the rules of healthrules.py: each reason from the reading that starts it, how
long it must last, when it clears, and the state the worst active reason gives; then the whole
chain on a simulated MI300X whose faults are injected (lens/sim/hosts/state.py)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from lens.devices.amdgpu import AmdGpuCollector, parse_bad_pages
from lens.devices.gpu import GpuHealth, GpuSnapshot, ThrottleReading
from lens.devices.health import HealthTracker
from lens.devices.sysfs import HostFiles
from lens.runtime.clock import FakeClock
from lens.sim.hosts.tree import HostTree

GPU = GpuSnapshot(
    vendor="amd", index=0, pci_bus_id="0000:05:00.0", card="card1", model="MI300X", serial="S0",
    uuid="U0", ecc_errors=(("umc", "uncorrectable", 0), ("umc", "correctable", 0)),
)  # fmt: skip


def _with(**changes: object) -> GpuSnapshot:
    return dataclasses.replace(GPU, **changes)  # type: ignore[arg-type]


def _ecc(uncorrectable: int = 0, correctable: int = 0) -> GpuSnapshot:
    return _with(
        ecc_errors=(("umc", "uncorrectable", uncorrectable), ("umc", "correctable", correctable))
    )


def _judge(tracker: HealthTracker, gpu: GpuSnapshot, at: float) -> GpuHealth:
    (judged,) = tracker.assess([gpu], at)
    assert judged.health is not None
    return judged.health


def test_a_rising_uncorrectable_count_is_unhealthy_for_a_day() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)
    assert _judge(tracker, _ecc(), 0).state == "healthy"
    risen = _judge(tracker, _ecc(uncorrectable=1), 1)
    assert (risen.state, risen.reasons) == ("unhealthy", ("ecc_uncorrectable",))
    assert _judge(tracker, _ecc(uncorrectable=1), 1 + 86_400).state == "unhealthy"
    assert _judge(tracker, _ecc(uncorrectable=1), 2 + 86_400).state == "healthy"


def test_uncorrectable_errors_already_counted_at_the_first_reading_count() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)
    assert _judge(tracker, _ecc(uncorrectable=3), 0).reasons == ("ecc_uncorrectable",)


def test_correctable_errors_degrade_only_above_the_rate() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=10)
    assert _judge(tracker, _ecc(correctable=5), 0).state == "healthy"
    assert _judge(tracker, _ecc(correctable=15), 600).state == "healthy"  # 10 in the hour
    degraded = _judge(tracker, _ecc(correctable=16), 1200)  # 11 within the hour
    assert (degraded.state, degraded.reasons) == ("degraded", ("ecc_correctable_rate",))
    # An hour with no new error: the window holds none, and the reason clears an hour later.
    assert _judge(tracker, _ecc(correctable=16), 1200 + 3600).state == "degraded"
    assert _judge(tracker, _ecc(correctable=16), 1201 + 3600 + 3600).state == "healthy"


def test_bad_pages_pending_unretirable_and_newly_retired() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)

    def pages(retired: int, pending: int = 0, unretirable: int = 0) -> GpuSnapshot:
        counts = (("retired", retired), ("pending", pending), ("unretirable", unretirable))
        return _with(vram_bad_pages=counts)

    assert _judge(tracker, pages(4), 0).state == "healthy"  # retired before the agent: normal
    assert _judge(tracker, pages(4, pending=1), 1).reasons == ("vram_pages_pending",)
    after_reset = _judge(tracker, pages(5), 2)
    assert (after_reset.state, after_reset.reasons) == ("degraded", ("vram_pages_retired",))
    failed = _judge(tracker, pages(5, unretirable=1), 3)
    assert failed.state == "unhealthy"
    assert failed.reasons == ("vram_pages_unretirable", "vram_pages_retired")


def _residency(thermal: int, power: int, periods: int) -> GpuSnapshot:
    reading = ThrottleReading(
        residency=(("power", power), ("thermal_hbm", thermal)), accumulations=periods
    )
    return _with(throttle=reading)


def test_a_throttler_counts_after_a_minute_and_clears_a_minute_after_it_stops() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)
    assert _judge(tracker, _residency(0, 0, 1000), 0).throttled == ()
    # Throttled 5 of every 10 periods on HBM temperature: throttled, not yet a minute.
    first = _judge(tracker, _residency(5, 0, 1010), 10)
    assert (first.throttled, first.state) == (("thermal_hbm",), "healthy")
    thermal = 5
    for at in range(20, 80, 10):
        thermal += 5
        health = _judge(tracker, _residency(thermal, 0, 1000 + at), at)
    assert (health.state, health.reasons) == ("degraded", ("throttle_thermal",))
    # Under a tenth of the interval is not throttled; the reason stays a minute longer.
    calm = _judge(tracker, _residency(thermal, 0, 1090), 90)
    assert calm.throttled == () and calm.state == "degraded"
    assert _judge(tracker, _residency(thermal, 0, 1200), 200).state == "healthy"


def test_power_capping_is_reported_and_leaves_the_gpu_healthy() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)
    power = 0
    for at in range(0, 130, 10):
        health = _judge(tracker, _residency(0, power, 1000 + at), at)
        power += 10
    assert (health.state, health.reasons, health.throttled) == (
        "healthy",
        ("throttle_power",),
        ("power",),
    )


def test_status_bits_name_the_throttlers_active_now() -> None:
    tracker = HealthTracker(correctable_errors_per_hour=100)
    reading = ThrottleReading(active=("thermal_socket", "prochot"))
    assert _judge(tracker, _with(throttle=reading), 0).throttled == ("prochot", "thermal_socket")


def test_parse_bad_pages() -> None:
    text = "0x00001234 : 0x00001000 : R\n0x00001235 : 0x00001000 : P\n0x00001236 : 0x00001000 : R\n"
    assert parse_bad_pages(text) == (("retired", 2), ("pending", 1), ("unretirable", 0))
    assert parse_bad_pages("") == (("retired", 0), ("pending", 0), ("unretirable", 0))
    assert parse_bad_pages(None) is None
    assert parse_bad_pages("0x1 : 0x1000 : X\n") is None


@given(st.text(max_size=200))
def test_any_bad_page_text_is_counts_or_none(text: str) -> None:
    parsed = parse_bad_pages(text)
    assert parsed is None or [status for status, _ in parsed] == ["retired", "pending",
                                                                  "unretirable"]  # fmt: skip


def test_faults_injected_into_a_simulated_mi300x_reach_its_health(
    mi300x: HostTree, clock: FakeClock
) -> None:
    collector = AmdGpuCollector(HostFiles(mi300x.root))
    tracker = HealthTracker(correctable_errors_per_hour=100)

    def health() -> dict[int, GpuHealth]:
        mi300x.update()
        judged = tracker.assess(collector.collect().gpus, clock.time())
        assert all(g.health is not None for g in judged)
        return {g.index: g.health for g in judged if g.health is not None}

    assert {h.state for h in health().values()} == {"healthy"}
    mi300x.node.add_memory_errors(2, uncorrectable=1)
    mi300x.node.add_bad_pages(5, pending=2)
    mi300x.node.throttle(6, frozenset({"thermal_hbm"}))
    for _ in range(7):
        clock.advance(10)
        now = health()
    assert (now[2].state, now[2].reasons) == ("unhealthy", ("ecc_uncorrectable",))
    assert (now[5].state, now[5].reasons) == ("degraded", ("vram_pages_pending",))
    assert (now[6].state, now[6].reasons, now[6].throttled) == (
        "degraded",
        ("throttle_thermal",),
        ("thermal_hbm",),
    )
    assert {i for i, h in now.items() if h.state != "healthy"} == {2, 5, 6}
    # The GPU cools and GPU 5 is reset: both back to healthy a minute later (GPU 5 retired its
    # pages meanwhile: degraded by that for a day).
    mi300x.node.throttle(6)
    mi300x.node.retire_pending_pages(5)
    for _ in range(8):
        clock.advance(10)
        now = health()
    assert now[6].state == "healthy" and now[5].reasons == ("vram_pages_retired",)
