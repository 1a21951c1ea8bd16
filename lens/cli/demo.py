"""`lens demo`: every role in one process against a simulated GPU cluster, on temporary files.

The roles and the simulated cluster are imported only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lens.cli.common import ConfigOption, fail, launch, load
from lens.cli.roles import DASHBOARD_FLAGS, DashboardPortOption, PortOption, with_ports
from lens.runtime import errors

# An hour a minute. The roles' loops and time limits run on the cluster's clock: much faster,
# and SQLite's one writer and two cores fall behind them.
MAX_SPEED = 60.0
REMOVERS = 8  # threads removing the demo's files


def demo(
    preset: Annotated[
        str,
        typer.Option(
            help="The simulated cluster: small (2 nodes, 16 GPUs) or medium (100 nodes, 800 "
            "GPUs, about 500 GPU pods)."
        ),
    ] = "small",
    speed: Annotated[
        float,
        typer.Option(
            help="How many times faster than real time the cluster lives (60: an hour a "
            "minute); the dashboard shows the cluster's time. Where the host cannot keep up, "
            "the cluster lives slower (the dashboard's header says how fast).",
            min=1,
            max=MAX_SPEED,
        ),
    ] = 1.0,
    config: ConfigOption = None,
    port: PortOption = None,
    api_port: DashboardPortOption = None,
) -> None:
    """Run Lens against a simulated GPU cluster: the simulated cluster's API, kubelets and
    node agents, the controller, jobs, API and dashboard (marked simulated) in one process.
    Its database and files are temporary: removed when it stops."""
    import tempfile

    from lens.roles.demo import main as demo_main

    if preset not in demo_main.PRESETS:
        expected = " or ".join(demo_main.PRESETS)
        fail("usage error", f"--preset: expected {expected}, got {preset!r}", errors.EXIT_CONFIG)
    cfg = with_ports(load(config), port, api_port)
    directory = Path(tempfile.mkdtemp(prefix="lens-demo-"))
    try:  # the roles' one-line errors exit through typer.Exit or SystemExit
        planned = demo_main.plan(cfg, preset=preset, speed=speed, directory=directory)
        for note in planned.notes:
            typer.echo(f"lens demo: {note}", err=True)
        launch(planned.config, *planned.roles, clock=demo_main.clock(speed), flags=DASHBOARD_FLAGS)
    finally:
        _remove(directory)


def _remove(directory: Path) -> None:
    """Remove the demo's files: a medium demo's host trees are some 70,000 files, seconds of
    disk work, so the person waiting is told. Each node's tree is removed beside the others:
    an unlink waits on the disk more than on the CPU."""
    import shutil
    from concurrent.futures import ThreadPoolExecutor

    typer.echo(f"lens demo: removing {directory}", err=True)
    trees = [tree for part in _children(directory) for tree in _children(part)]
    with ThreadPoolExecutor(max_workers=REMOVERS) as pool:
        for tree in trees:
            pool.submit(shutil.rmtree, tree, ignore_errors=True)
    shutil.rmtree(directory, ignore_errors=True)


def _children(directory: Path) -> list[Path]:
    """The directories right under `directory` (none when it is not one)."""
    try:
        return [entry for entry in directory.iterdir() if entry.is_dir() and not entry.is_symlink()]
    except OSError:
        return []
