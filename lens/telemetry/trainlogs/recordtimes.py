"""When a log collector says a record was written, in Unix seconds with the fraction as written
(REFERENCE.md 15.1 #27): fluent-bit's `date` in each `json_date_format` (double, epoch,
epoch_ms, iso8601, java_sql_timestamp) and Vector's RFC 3339 `timestamp` with nanoseconds.
records.py reads a record's time through `seconds`."""

from __future__ import annotations

import calendar
import datetime
import decimal
import re

# A number of seconds past this is from the year 5138 on: it counts milliseconds (epoch_ms).
_MILLISECONDS_FROM = 100_000_000_000
# Times the store holds on every engine: after 1970, before the year 10000.
_LATEST = 253_402_300_799
_NUMBER = re.compile(r"\d{1,16}(?:\.\d{1,12})?")
_STAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,12}))?"
    r"\s*(?:([Zz])|([+-])(\d\d):?(\d\d)|UTC)?"
)


def seconds(value: object) -> float | None:
    """The Unix time `value` gives (a number of seconds or milliseconds, or a timestamp text;
    a text without a zone is UTC), correctly rounded to a float; None when it gives none, or a
    time before 1970 or after the year 9999."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) > 10**18:
            return None
        return _within(decimal.Decimal(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return _within(decimal.Decimal(value))
    if isinstance(value, str) and len(value) <= 64:
        return _text(value.strip())
    return None


def _within(number: decimal.Decimal) -> float | None:
    if number >= _MILLISECONDS_FROM:
        number = number / 1000
    if not 0 < number <= _LATEST:
        return None
    return float(number)


def _text(text: str) -> float | None:
    if _NUMBER.fullmatch(text):
        return _within(decimal.Decimal(text))
    found = _STAMP.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, _, sign, zone_h, zone_m = found.groups()
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second)
        )
    except ValueError:  # 2026-02-30, 25:00, a leap second
        return None
    total = decimal.Decimal(calendar.timegm(moment.timetuple()))
    if fraction:
        total += decimal.Decimal(int(fraction)) / 10 ** len(fraction)
    if sign:
        offset = int(zone_h) * 3600 + int(zone_m) * 60
        total += -offset if sign == "+" else offset
    return _within(total) if total < _MILLISECONDS_FROM else None
