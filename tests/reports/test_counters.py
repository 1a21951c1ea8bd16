"""Counter increases across wraps, resets, saturation and glitches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.reports.counters import PMA_COUNTERS, Width, increase

W32 = Width(bits=32)
W64 = Width(bits=64)
DATA = Width(bits=64, unit=4)  # bytes from a 64-bit counter of 4-byte words
BOUND = 1e9


def test_a_counter_that_rises_rises_by_the_difference() -> None:
    assert increase(1_000, 1_500, width=W64, bound=BOUND) == (500, False)
    assert increase(7, 7, width=W32, bound=BOUND) == (0, False)


def test_a_32_bit_counter_wrapping_counts_through_the_wrap() -> None:
    # 100 before 2^32, then 50 past it: 150 counted.
    assert increase(2**32 - 100, 50, width=W32, bound=BOUND) == (150, False)


def test_a_64_bit_counter_wrapping_counts_through_the_wrap() -> None:
    assert increase(2**64 - 1, 9, width=W64, bound=BOUND) == (10, False)


def test_a_counter_of_words_wraps_at_its_width_in_bytes() -> None:
    assert increase(4 * (2**64 - 3), 8, width=DATA, bound=BOUND) == (20, False)


def test_a_counter_that_went_down_far_from_its_wrap_was_reset() -> None:
    # A 64-bit counter at 5e12 reading 300: a wrap would be ~1.8e19, so it restarted from 0.
    assert increase(5 * 10**12, 300, width=W64, bound=BOUND) == (300, True)


def test_a_32_bit_counter_reset_is_told_from_a_wrap_by_the_bound() -> None:
    assert increase(2**31, 300, width=W32, bound=BOUND) == (300, True)


def test_a_counter_wider_than_declared_is_reset_not_wrapped() -> None:
    # Past 2^32, so not the 32-bit counter it was declared: going down is a reset.
    assert increase(2**40, 10, width=W32, bound=BOUND) == (10, True)


def test_a_huge_jump_is_unknown_never_counted() -> None:
    assert increase(10, 10 + 2**60, width=W64, bound=BOUND) == (None, True)


def test_a_reset_to_a_value_past_the_bound_is_unknown() -> None:
    assert increase(2**62, 2**50, width=W64, bound=BOUND) == (None, True)


def test_a_saturated_counter_is_unknown_until_cleared() -> None:
    symbol_error = dict(PMA_COUNTERS)["symbol_error"]
    assert symbol_error == Width(bits=16, saturates=True)
    assert increase(65_000, 65_535, width=symbol_error, bound=BOUND) == (None, False)
    assert increase(65_535, 65_535, width=symbol_error, bound=BOUND) == (None, False)
    # Cleared (perfquery -R): counted from 0 again, never wrapped.
    assert increase(65_535, 4, width=symbol_error, bound=BOUND) == (4, True)
    assert increase(60_000, 4, width=symbol_error, bound=BOUND) == (4, True)


def test_the_ibta_error_counters_have_the_kernels_widths() -> None:
    widths = {name: width.bits for name, width in PMA_COUNTERS}
    assert widths["link_downed"] == 8
    assert widths["local_link_integrity_errors"] == 4
    assert widths["port_xmit_discards"] == 16
    assert all(width.saturates for _, width in PMA_COUNTERS)


_widths = st.sampled_from([W32, W64, DATA, Width(bits=16, saturates=True), Width(bits=8)])


@given(_widths, st.integers(0, 2**66), st.integers(0, 2**66), st.floats(0, 1e13))
def test_an_increase_is_never_negative_nor_past_the_bound(
    width: Width, previous: int, current: int, bound: float
) -> None:
    step, _irregular = increase(previous, current, width=width, bound=bound)
    assert step is None or 0 <= step <= bound


@given(
    st.sampled_from([W32, W64, DATA]),
    st.integers(0, 2**64 - 1),
    st.lists(st.integers(0, 10**9), min_size=1, max_size=50),
)
def test_a_wrapping_counter_reports_exactly_what_was_counted(
    width: Width, start: int, steps: list[int]
) -> None:
    """The counter as the hardware shows it, modulo its width: each true step is recovered."""
    counted = start * width.unit
    for step in steps:
        step *= width.unit
        before, counted = counted, counted + step
        got = increase(
            before % width.modulus, counted % width.modulus, width=width, bound=1e9 * width.unit
        )
        assert got == (step, False)
