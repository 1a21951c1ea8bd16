from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import lens
from lens.cli import app

from .conftest import ARGV_TEXT, assert_no_traceback, run_lens

HEAVY = (
    "kubernetes",
    "grpc",
    "fastapi",
    "uvicorn",
    "psycopg2",
    "pymysql",
    "peewee",
    "prometheus_client",
    "yaml",  # the config is loaded by the commands that use it
)


def test_help_lists_the_commands_and_imports_nothing_heavy() -> None:
    probe = (
        "import sys, json\n"
        "sys.argv = ['lens', '--help']\n"
        "import lens.cli\n"
        "try:\n"
        "    lens.cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert "config" in result.stdout and "db" in result.stdout and "version" in result.stdout
    loaded = set(json.loads(result.stderr.strip().splitlines()[-1]))
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == []


def test_version() -> None:
    result = run_lens("version")
    assert (result.returncode, result.stdout.strip()) == (0, lens.__version__)


_FLAGS = {
    "node-agent": ("--port", "--host-root"),
    "jobs": ("--port", "--grpc-port"),
    "controller": ("--port",),
    "gpus": ("--host-root", "--interval", "--watch"),
    "rdma": ("--host-root", "--interval", "--json"),
    "containers": ("--host-root", "--interval", "--address", "--namespace", "--docker-address"),
}


@pytest.mark.slow_timeout  # in-process commands, 40 of them
@given(st.data(), st.sampled_from(sorted(_FLAGS)))
def test_any_flag_values_are_checked_before_anything_starts(
    tmp_path: Path, data: st.DataObject, command: str
) -> None:
    # A missing config file stops every command once its flags are parsed, so each either
    # refuses a flag (a usage error) or the file (a config error): exit 2, never a traceback.
    args = [command, "--config", str(tmp_path / "absent.yaml")]
    for flag in data.draw(st.lists(st.sampled_from(_FLAGS[command]), max_size=3)):
        args += [flag] if flag in ("--watch", "--json") else [flag, data.draw(ARGV_TEXT)]
    result = CliRunner().invoke(app, args)
    assert_no_traceback(result, codes=(2,))
    assert "Invalid value for" in result.stderr or result.stderr.startswith("lens: config error:")
