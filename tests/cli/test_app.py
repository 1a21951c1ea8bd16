from __future__ import annotations

import json
import subprocess
import sys

import lens

from .conftest import run_lens

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
