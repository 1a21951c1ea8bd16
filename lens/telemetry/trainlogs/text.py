"""What surrounds a framework's line in a container log, removed before parsing: ANSI colour
sequences (TorchTitan puts them between fields), torchrun's `[default3]:` and PyTorch's
`[rank3]:` prefixes, Slurm's `3: ` task label, a tqdm bar's carriage returns; and the numbers
as frameworks print them ("7,842", "1.5E-05", "78.79%", "151.27GB")."""

from __future__ import annotations

import calendar
import datetime
import decimal
import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
# torchrun --tee: [default3]: / [trainer0]: (local rank); PyTorch: [rank3]: (global rank)
_TORCHRUN = re.compile(r"^\[(?:[a-z_]*?)(\d+)\]:")
_SLURM = re.compile(r"^(\d{1,5}): ")
_PRIMUS_RANK = re.compile(r"\[rank-(\d+)/\d+\]")
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
MAX_LINE = 16_384  # longer is no iteration line: not parsed


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
    """The first number in `text` ("7,842" -> 7842.0, "1.5E-05", "61.22GiB(32%)" -> 61.22),
    times `scale` in decimal (seconds "2.046" are 2046.0 ms, not 2045.9999999999998); None
    when there is none or it is not finite."""
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
    try:
        moment = datetime.datetime.strptime(whole, layout)
    except ValueError:
        return None
    seconds = calendar.timegm(moment.timetuple())
    if fraction:
        if not fraction.isdigit():
            return None
        seconds += int(fraction) / 10 ** len(fraction)
    return float(seconds)
