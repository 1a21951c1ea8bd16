"""What surrounds a framework's line in a container log, removed before parsing: ANSI colour
sequences (TorchTitan puts them between fields), torchrun's `[default3]:` and PyTorch's
`[rank3]:` prefixes, Slurm's `3: ` task label, a tqdm bar's carriage returns; and the numbers
as frameworks print them ("7,842", "1.5E-05", "78.79%", "151.27GB")."""

from __future__ import annotations

import calendar
import datetime
import decimal
import functools
import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
# torchrun --tee: [default3]: / [trainer0]: (local rank); PyTorch: [rank3]: (global rank)
_TORCHRUN = re.compile(r"^\[(?:[a-z_]*?)(\d+)\]:")
_SLURM = re.compile(r"^(\d{1,5}): ")
_PRIMUS_RANK = re.compile(r"\[rank-(\d+)/\d+\]")
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
MAX_LINE = 16_384  # longer is no iteration line: not parsed
ISO_LAYOUT = "%Y-%m-%d %H:%M:%S"
# The stamps of ISO_LAYOUT every framework prints, read without strptime (a fifth of a
# Megatron line's parse): digits strptime's own pattern takes (any \d in a year, ASCII
# elsewhere), its ranges checked; any other stamp goes to strptime.
_ISO = re.compile(r"(\d{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})")
_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()


def clean(line: str) -> tuple[str, int | None]:
    """The line without colours and rank prefixes, and the rank a prefix gave (None)."""
    if "\r" in line:
        line = line.rsplit("\r", 1)[-1]  # what a terminal shows: the last redraw
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    rank = None
    found = _TORCHRUN.match(line) or _SLURM.match(line)
    while found is not None:  # [default0]:[rank0]: ...
        rank = int(found.group(1))
        line = line[found.end() :]
        found = _TORCHRUN.match(line)
    if rank is None and "[rank-" in line:
        primus = _PRIMUS_RANK.search(line)
        rank = int(primus.group(1)) if primus else None
    return line, rank


def number(text: str, *, scale: int = 1) -> float | None:
    """The first number in `text` ("7,842" -> 7842.0, "1.5E-05", "61.22GiB(32.01%)" -> 61.22),
    times `scale` in decimal (seconds "2.046" are 2046.0 ms, not 2045.9999999999998); None
    when there is none or it is not finite."""
    if scale == 1 and "_" not in text:  # float() reads "1_0" as 10; the pattern, as 1
        try:
            value = float(text)  # most fields are one plain number: no pattern needed
        except ValueError:
            pass
        else:
            if value - value == 0.0:  # finite; else the pattern decides ("nan": none)
                return value
    found = _NUMBER.search(text)
    if found is None:
        return None
    digits = found.group().replace(",", "")
    try:
        value = float(decimal.Decimal(digits) * scale) if scale != 1 else float(digits)
    except (ValueError, ArithmeticError):
        return None
    return value if value == value and abs(value) != float("inf") else None


def numbers(text: str) -> list[float]:
    """Every number in `text`, in order ("5123.4/5140.9" -> [5123.4, 5140.9])."""
    found = []
    for match in _NUMBER.finditer(text):
        try:
            value = float(match.group().replace(",", ""))
        except ValueError:
            continue
        if value == value and abs(value) != float("inf"):
            found.append(value)
    return found


def utc_seconds(stamp: str, layout: str) -> float | None:
    """`stamp` (no zone: taken as UTC, as containers' clocks are) in Unix seconds, its
    fraction kept exactly as written (".482113" is 482,113 microseconds, ",482" 482 ms)."""
    whole, _, fraction = stamp.replace(",", ".").partition(".")
    iso = _ISO.fullmatch(whole) if layout == ISO_LAYOUT else None
    seconds = _iso_seconds(iso) if iso is not None else _strptime_seconds(whole, layout)
    if seconds is None or (fraction and not fraction.isdigit()):
        return None
    return seconds + int(fraction) / 10 ** len(fraction) if fraction else float(seconds)


def _iso_seconds(iso: re.Match[str]) -> int | None:
    """What strptime and timegm make of an ISO_LAYOUT stamp, the same invalid ones refused."""
    start = _day_start(iso.group(1))
    hour, minute, second = int(iso.group(2)), int(iso.group(3)), int(iso.group(4))
    if start is None or hour > 23 or minute > 59 or second > 59:
        return None
    return start + hour * 3600 + minute * 60 + second


@functools.lru_cache(maxsize=256)  # a log's lines share a handful of days
def _day_start(day: str) -> int | None:
    """The Unix seconds of a "YYYY-MM-DD" day's start; None for no such day."""
    try:  # _ISO took its digits
        date = datetime.date(int(day[0:4]), int(day[5:7]), int(day[8:10]))
    except ValueError:
        return None
    return (date.toordinal() - _EPOCH_DAY) * 86400


def _strptime_seconds(whole: str, layout: str) -> int | None:
    try:
        moment = datetime.datetime.strptime(whole, layout)
    except ValueError:
        return None
    return calendar.timegm(moment.timetuple())
