"""A benchmark as a person runs it: `python -m bench NAME ARGS` in a process of its own (its
figures untouched by the test worker's other threads), its one JSON object read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def bench_figures(name: str, *args: str, timeout: float) -> dict[str, Any]:
    """The figures `python -m bench NAME ARGS` printed; its stderr when it failed."""
    result = subprocess.run(
        [sys.executable, "-m", "bench", name, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures
