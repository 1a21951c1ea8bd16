"""Log setup: one JSON object per line in clusters, readable text on a terminal (STYLE S13).

lens/cli/ calls `configure()` once from the LoggingConfig; every other module only does
`log = logging.getLogger(__name__)` and passes variable data in `extra`. JSON lines carry no
terminal escape sequences: uvicorn's colored copy of its message (`color_message`) is dropped,
and escapes in any text are removed.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
import sys
from typing import Any, TextIO

from lens.runtime.config import LoggingConfig

# Attributes every LogRecord has, and uvicorn's `color_message` (its message again, colored
# for its own formatter: ours write `msg`); anything else on a record came from `extra=`.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}

# ECMA-48 escape sequences: CSI (colors, cursor), OSC (titles, links), the other ESC ones
# (charsets, keypad), the one-byte CSI, and a stray ESC left of a broken one.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x1b\x9b]"
)


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _RESERVED and not k.startswith("_")}


def _plain(value: object) -> object:
    """`value` with escape sequences removed from its text, inside mappings and sequences too;
    other values as JSON will write them (`str()`)."""
    if isinstance(value, str):
        return _ESCAPES.sub("", value) if "\x1b" in value or "\x9b" in value else value
    if isinstance(value, dict):
        return {_plain(str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _plain(str(value))


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.datetime.fromtimestamp(record.created, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "msg", ...extra fields, "exc"}` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_fields(record))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(_plain(entry), ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message key=value ...` for people reading a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.datetime.fromtimestamp(record.created).strftime("%H:%M:%S.%f")[:-3]
        pairs = " ".join(f"{k}={v}" for k, v in _fields(record).items())
        line = f"{moment} {record.levelname:<7} {record.name}: {record.getMessage()}"
        if pairs:
            line = f"{line}  {pairs}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


def configure(cfg: LoggingConfig, *, stream: TextIO | None = None) -> logging.Handler:
    """Route the root logger to `stream` (stderr) in the configured format and level."""
    out = stream if stream is not None else sys.stderr
    use_json = cfg.format == "json" or (cfg.format == "auto" and not _is_terminal(out))
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter() if use_json else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(cfg.level.upper())
    # Third-party libraries log per request at info; keep them at warning unless debugging.
    library_level = logging.DEBUG if cfg.level == "debug" else logging.WARNING
    for name in ("peewee", "urllib3", "kubernetes", "uvicorn.access"):
        logging.getLogger(name).setLevel(library_level)
    return handler


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
