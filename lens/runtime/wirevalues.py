"""Values on the agents' event stream held to what the store can write, by every domain whose
records travel on it (container events, device reports).

The sender makes its values fit (usable_*), so that the server never has to skip its records;
the receiver refuses a record whose values do not fit (checked_*) as a WireError, which the
event server counts by its reason and acknowledges past.
"""

from __future__ import annotations

import math

from google.protobuf import timestamp_pb2


class WireError(ValueError):
    """A record the server cannot use (unknown enum, missing body, a value the store cannot
    hold). `reason` is one of a few fixed phrases, fit for a metric label; the message adds
    the details."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


# Epoch seconds of 1000-01-01 and 10000-01-01 UTC. Every engine holds the times between (a
# datetime ends with year 9999; MariaDB's DATETIME starts at 1000; SQLite's text column sorts
# only 4-digit years), and they make a valid protobuf Timestamp.
MIN_TIME = -30_610_224_000.0
MAX_TIME = 253_402_300_800.0


def usable_time(seconds: float) -> float:
    """`seconds` brought into what the store holds (never NaN): what the agent sends.

    A whole second short of MAX_TIME, so that a fraction that rounds up stays below it."""
    if MIN_TIME <= seconds <= MAX_TIME - 1:
        return seconds
    if seconds > MAX_TIME - 1:
        return MAX_TIME - 1
    return MIN_TIME if seconds < MIN_TIME else 0.0  # NaN: an unknown time, as an unset one


def usable_text(value: str, limit: int | None = None) -> str:
    """`value` without NUL characters, cut to `limit` characters, a lone surrogate (from JSON's
    escapes) as "?": what the agent sends."""
    if (limit is None or len(value) <= limit) and "\0" not in value and _is_utf8(value):
        return value
    return value.encode(errors="replace").decode().replace("\0", "")[:limit]


def _is_utf8(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def checked_time(value: timestamp_pb2.Timestamp, field: str) -> float:
    """A received Timestamp as epoch seconds; WireError outside what the store holds."""
    seconds = seconds_of(value)
    if not MIN_TIME <= seconds < MAX_TIME:
        raise WireError("time out of range", f"{field} {value.seconds}s {value.nanos}ns")
    return seconds


def checked_seconds(value: float, field: str) -> float:
    """Received epoch seconds (a plain number); WireError outside what the store holds."""
    if not MIN_TIME <= value < MAX_TIME:
        raise WireError("time out of range", f"{field} {value}")
    return value


def checked_text(value: str, limit: int, field: str) -> str:
    """A received text; WireError when longer than its column or holding a NUL."""
    if len(value) > limit:
        raise WireError("text too long", f"{field} of {len(value)} characters, over {limit}")
    if "\0" in value:
        raise WireError("text with a NUL character", field)
    return value


def checked_number(value: float, field: str) -> float:
    """A received figure; WireError for NaN or an infinity, which no column holds as such."""
    if not math.isfinite(value):
        raise WireError("number not finite", field)
    return value


def set_time(field: timestamp_pb2.Timestamp, seconds: float) -> None:
    whole = int(seconds // 1)
    nanos = round((seconds - whole) * 1e9)
    if nanos >= 1_000_000_000:  # a fraction that rounds up to the next second
        whole, nanos = whole + 1, nanos - 1_000_000_000
    field.seconds = whole
    field.nanos = nanos


def seconds_of(value: timestamp_pb2.Timestamp) -> float:
    return value.seconds + value.nanos / 1e9
