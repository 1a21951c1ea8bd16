"""The rules of GPU health, as data: which reason makes which state, how long its condition must
hold before it counts, and how long it stays after the condition ends (docs/node-agent.md).

health.py judges each GPU reading by them. A GPU's state is the worst state among its active
reasons, `healthy` with none. Throttling by power capping is reported but leaves a GPU healthy:
a GPU at full load runs at its power cap by design.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

State = Literal["healthy", "degraded", "unhealthy"]
STATES: tuple[State, ...] = ("healthy", "degraded", "unhealthy")

HOUR = 3600.0
DAY = 86400.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """A reason, the state it puts a GPU in, and when it starts and ends."""

    reason: str
    state: State
    when: str  # the condition, as docs/node-agent.md says it
    lasts_seconds: float = 0.0  # the condition held this long before the reason is active
    clears_seconds: float = 0.0  # the reason stays active this long after the condition ends


RULES: tuple[Rule, ...] = (
    Rule(
        reason="ecc_uncorrectable",
        state="unhealthy",
        when="an uncorrectable memory error count (any RAS block; NVIDIA: volatile ECC) rose, "
        "or was above 0 when the agent first read it",
        clears_seconds=DAY,
    ),
    Rule(
        reason="ecc_correctable_rate",
        state="degraded",
        when="more correctable memory errors in the last hour than "
        "node_agent.gpu_correctable_errors_per_hour",
        clears_seconds=HOUR,
    ),
    Rule(
        reason="vram_pages_pending",
        state="degraded",
        when="bad VRAM pages waiting to be retired (ras/gpu_vram_bad_pages status P; a GPU "
        "reset retires them)",
    ),
    Rule(
        reason="vram_pages_unretirable",
        state="unhealthy",
        when="a bad VRAM page the driver could not retire (status F)",
    ),
    Rule(
        reason="vram_pages_retired",
        state="degraded",
        when="a VRAM page was retired since the last reading (status R, one more)",
        clears_seconds=DAY,
    ),
    Rule(
        reason="throttle_thermal",
        state="degraded",
        when="a thermal throttler active (AMD: socket, HBM or voltage regulator; NVIDIA: "
        "software or hardware thermal slowdown)",
        lasts_seconds=60.0,
        clears_seconds=60.0,
    ),
    Rule(
        reason="throttle_prochot",
        state="degraded",
        when="the board's hardware slowdown asserted (AMD: PROCHOT; NVIDIA: HW slowdown or "
        "power brake)",
        lasts_seconds=60.0,
        clears_seconds=60.0,
    ),
    Rule(
        reason="throttle_power",
        state="healthy",
        when="the power cap limiting clocks (reported; expected at full load)",
        lasts_seconds=60.0,
        clears_seconds=60.0,
    ),
)

# The health reason of each throttler a GPU reports (gpumetrics.THROTTLE_STATUS_BITS, AMD;
# nvidia.py's clock event reasons).
THROTTLE_REASONS = {
    "prochot": "throttle_prochot",
    "power": "throttle_power",
    "thermal_socket": "throttle_thermal",
    "thermal_vr": "throttle_thermal",
    "thermal_hbm": "throttle_thermal",
    "thermal": "throttle_thermal",  # NVIDIA's (nvidia.py)
    "hw_slowdown": "throttle_prochot",
    "power_brake": "throttle_prochot",
}
# A throttler with residency counters (gpu_metrics v1.6+) counts as active over the interval
# between two readings when it throttled in at least this share of it.
THROTTLE_SHARE = 0.1
# How far back correctable errors are counted against the configured rate.
CORRECTABLE_WINDOW_SECONDS = HOUR

_SEVERITY = {state: rank for rank, state in enumerate(STATES)}


def worst(states: list[State]) -> State:
    """The most severe of `states`; healthy when there are none."""
    return max(states, key=_SEVERITY.__getitem__, default="healthy")


def rules_table() -> str:
    """The rules as docs/node-agent.md lists them (a test keeps the two the same)."""
    lines = [
        "| reason | state | when | lasts | clears after |",
        "|---|---|---|---:|---:|",
    ]
    for rule in RULES:
        lines.append(
            f"| `{rule.reason}` | {rule.state} | {rule.when} | {_duration(rule.lasts_seconds)} "
            f"| {_duration(rule.clears_seconds)} |"
        )
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    if not seconds:
        return "at once"
    for unit, size in (("d", DAY), ("h", HOUR), ("min", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"
