from __future__ import annotations

import io
import json
import logging

import pytest

from lens.runtime import config
from lens.runtime import logging as lens_logging


@pytest.fixture(autouse=True)
def _restore_root_logger() -> object:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_lines_carry_the_extra_fields() -> None:
    out = io.StringIO()
    lens_logging.configure(config.LoggingConfig(format="json"), stream=out)
    logging.getLogger("lens.test").info("loop failed", extra={"loop": "gpu", "count": 3})
    entry = json.loads(out.getvalue())
    assert entry["level"] == "info"
    assert entry["logger"] == "lens.test"
    assert entry["msg"] == "loop failed"
    assert entry["loop"] == "gpu"
    assert entry["count"] == 3
    assert entry["ts"].endswith("Z")


def test_json_lines_include_the_exception() -> None:
    out = io.StringIO()
    lens_logging.configure(config.LoggingConfig(format="json"), stream=out)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("lens.test").exception("failed")
    entry = json.loads(out.getvalue())
    assert "ValueError: boom" in entry["exc"]


def test_auto_is_text_on_a_terminal_and_json_otherwise() -> None:
    terminal = _Terminal()
    lens_logging.configure(config.LoggingConfig(format="auto"), stream=terminal)
    logging.getLogger("lens.test").warning("disk low", extra={"free": "1G"})
    line = terminal.getvalue()
    assert "WARNING" in line
    assert "lens.test: disk low  free=1G" in line

    pipe = io.StringIO()
    lens_logging.configure(config.LoggingConfig(format="auto"), stream=pipe)
    logging.getLogger("lens.test").warning("disk low")
    assert json.loads(pipe.getvalue())["msg"] == "disk low"


def test_level_filters_lower_messages() -> None:
    out = io.StringIO()
    lens_logging.configure(config.LoggingConfig(level="warning", format="json"), stream=out)
    logging.getLogger("lens.test").info("hidden")
    logging.getLogger("lens.test").error("shown")
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["msg"] for line in lines] == ["shown"]


RED = "\x1b[31m"
RESET = "\x1b[0m"


def test_json_lines_drop_uvicorns_color_message_and_every_escape() -> None:
    out = io.StringIO()
    lens_logging.configure(config.LoggingConfig(format="json"), stream=out)
    log = logging.getLogger("lens.test")
    # As uvicorn logs: its message again, colored, for its own formatter.
    log.info("Started server process [%d]", 7, extra={"color_message": f"[{RED}%d{RESET}]"})
    log.info(
        f"{RED}red{RESET} message",
        extra={"nested": {"key": [f"{RED}a{RESET}", 1, None]}, "title": "\x1b]0;title\x07x"},
    )
    try:
        raise ValueError(f"{RED}boom{RESET}")
    except ValueError:
        log.exception("failed")
    text = out.getvalue()
    assert "\\u001b" not in text and "\x1b" not in text
    first, second, third = (json.loads(line) for line in text.splitlines())
    assert first["msg"] == "Started server process [7]" and "color_message" not in first
    assert second["msg"] == "red message"
    assert second["nested"] == {"key": ["a", 1, None]} and second["title"] == "x"
    assert third["exc"].endswith("ValueError: boom")


def test_text_on_a_terminal_shows_the_message_once_and_keeps_its_colors() -> None:
    terminal = _Terminal()
    lens_logging.configure(config.LoggingConfig(format="text"), stream=terminal)
    logging.getLogger("uvicorn.error").warning(
        "Started server process [%d]", 7, extra={"color_message": f"[{RED}%d{RESET}]"}
    )
    logging.getLogger("lens.test").warning(f"{RED}red{RESET}", extra={"free": "1G"})
    first, second = terminal.getvalue().splitlines()
    assert first.endswith("uvicorn.error: Started server process [7]"), "no color_message="
    assert second.endswith(f"lens.test: {RED}red{RESET}  free=1G"), "a terminal shows colors"
