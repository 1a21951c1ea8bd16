"""Run one benchmark by name: `python -m bench upsert [--rows N]`; prints one JSON object."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from pathlib import Path

from bench import machine


def _names() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        m.name.removeprefix("bench_")
        for m in pkgutil.iter_modules([str(here)])
        if m.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    names = _names()
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run a Lens benchmark.")
    parser.add_argument("name", choices=names, help="which benchmark")
    args, rest = parser.parse_known_args(argv)
    module = importlib.import_module(f"bench.bench_{args.name}")
    figures = module.run(rest)
    print(json.dumps({"benchmark": args.name, "machine": machine.describe(), **figures}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
