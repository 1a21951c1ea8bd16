"""How a hardware counter rose between two readings: wraps, resets, saturation, implausible jumps.

portminutes.py resolves every RDMA port counter's readings with `increase` before splitting them
into minutes. The rule (docs/reports.md, "Counter wraps and resets"): a counter that went down
wrapped when the wrap's increase is plausible for its width, and was reset otherwise, its new
value then being the count since the reset; an increase more than the port could carry is a
glitch, unknown. An increase is never negative and never past the bound.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Width:
    """How far a counter counts before it wraps (or, where it saturates, stops)."""

    bits: int = 64
    unit: int = 1  # the reading is the hardware's count times this (PMA data: 4-byte words)
    saturates: bool = False  # IBTA PortCounters stop at all ones instead of wrapping

    @property
    def modulus(self) -> int:
        """The reading at which the counter wraps back to 0."""
        return self.unit << self.bits

    @property
    def ceiling(self) -> int:
        """The highest reading: a saturating counter stuck here has stopped counting."""
        return self.unit * ((1 << self.bits) - 1)


_SATURATING_4 = Width(bits=4, saturates=True)
_SATURATING_8 = Width(bits=8, saturates=True)
_SATURATING_16 = Width(bits=16, saturates=True)

# The error and discard counters of IBTA PortCounters as Linux shows them under a port's
# `counters/` (drivers/infiniband/core/sysfs.c PORT_PMA_ATTR widths); they saturate.
PMA_COUNTERS: tuple[tuple[str, Width], ...] = (
    ("symbol_error", _SATURATING_16),
    ("link_error_recovery", _SATURATING_8),
    ("link_downed", _SATURATING_8),
    ("port_rcv_errors", _SATURATING_16),
    ("port_rcv_remote_physical_errors", _SATURATING_16),
    ("port_rcv_switch_relay_errors", _SATURATING_16),
    ("port_xmit_discards", _SATURATING_16),
    ("port_xmit_constraint_errors", _SATURATING_8),
    ("port_rcv_constraint_errors", _SATURATING_8),
    ("local_link_integrity_errors", _SATURATING_4),
    ("excessive_buffer_overrun_errors", _SATURATING_4),
    ("VL15_dropped", _SATURATING_16),
)


def increase(previous: int, current: int, *, width: Width, bound: float) -> tuple[int | None, bool]:
    """The counter's increase from `previous` to `current`, and whether the readings were
    irregular (a reset or a jump). The increase is None when it cannot be known: a saturated
    counter, a jump past `bound` (the most the device could have counted in between), or a
    reset whose new value is itself past it."""
    if width.saturates and current >= width.ceiling:
        return None, False
    if current >= previous:
        step = current - previous
        return (step, False) if step <= bound else (None, True)
    # A reading at or past the declared modulus shows the counter is wider than declared: then
    # going down can only be a reset.
    if not width.saturates and previous < width.modulus:
        wrapped = width.modulus - previous + current
        if wrapped <= bound:
            return wrapped, False
    return (current, True) if current <= bound else (None, True)
