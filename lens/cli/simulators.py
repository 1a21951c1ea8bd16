"""`lens sim kube` and `lens sim node`: the simulators, for tests and demos (never production).

The one command group that imports lens.sim (only inside its commands).
"""

from __future__ import annotations

from typing import Annotated

import typer

from lens.cli.common import fail
from lens.runtime import errors

sim_app = typer.Typer(
    help="Simulators for tests and demos (never for production).", no_args_is_help=True
)


@sim_app.command("kube")
def sim_kube(
    port: Annotated[
        int, typer.Option(help="Port to listen on (0 picks a free one).", min=0, max=65535)
    ] = 6443,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    kubeconfig: Annotated[
        str | None, typer.Option(help="Write a kubeconfig for this server to this file.")
    ] = None,
    history: Annotated[
        int, typer.Option(help="Watch events kept per resource type.", min=1, max=10_000_000)
    ] = 100,
    scenario: Annotated[
        str | None, typer.Option(help="Load and replay a preset cluster: small, medium or large.")
    ] = None,
    speed: Annotated[
        float,
        typer.Option(help="How many times faster than real time to replay.", min=0.001, max=1e6),
    ] = 1.0,
) -> None:
    """Serve a simulated Kubernetes API until stopped (Ctrl-C or SIGTERM)."""
    from pathlib import Path

    from lens.runtime import lifecycle
    from lens.runtime import logging as lens_logging
    from lens.runtime.config import LoggingConfig
    from lens.sim.kube.server import KubeApiServer, ServerPart
    from lens.sim.scenario import replaying, spec
    from lens.sim.scenario.player import ScenarioPlayer

    lens_logging.configure(LoggingConfig())
    try:
        chosen = spec.preset(scenario) if scenario else None
        clock = replaying.ScaledClock(speed)
    except ValueError as exc:
        fail("usage error", str(exc), errors.EXIT_CONFIG)
    try:
        server = KubeApiServer(host=host, port=port, history_size=history, clock=clock)
    except (OSError, ValueError) as exc:  # no such host, address in use, a host name IDNA refuses
        fail(
            "usage error",
            f"--host/--port: cannot listen on {host}:{port}: {exc}",
            errors.EXIT_CONFIG,
        )
    written = None
    if kubeconfig:
        try:
            written = server.write_kubeconfig(Path(kubeconfig))
        except (OSError, ValueError) as exc:
            server.stop()
            fail(
                "usage error",
                f"--kubeconfig: cannot write {kubeconfig}: {exc}",
                errors.EXIT_CONFIG,
            )
    parts: list[lifecycle.Part] = [ServerPart(server)]
    if chosen is not None:
        player = ScenarioPlayer(chosen, server, clock=clock).load()
        parts.append(replaying.ReplayPart(player))
        typer.echo(
            f"scenario {chosen.name}: {len(chosen.node_names)} nodes, {chosen.gpu_count} GPUs"
        )
    typer.echo(f"simulated Kubernetes API at {server.url}")
    if written is not None:
        typer.echo(f"kubeconfig: {written}")
    service = lifecycle.Service("sim-kube", stop_timeout=5, parts=parts)
    raise typer.Exit(service.run())


@sim_app.command("node")
def sim_node(
    directory: Annotated[str, typer.Argument(help="Directory to build the host tree in.")],
    vendor: Annotated[str, typer.Option(help="amd or nvidia.")] = "amd",
    model: Annotated[
        str | None, typer.Option(help="GPU model (default: MI300X for amd, H100 for nvidia).")
    ] = None,
    gpus: Annotated[int, typer.Option(help="Number of GPUs.")] = 8,
    rdma: Annotated[int, typer.Option(help="Number of RDMA devices.")] = 8,
    partition: Annotated[
        str, typer.Option(help="Compute partition mode (SPX, DPX, QPX, CPX).")
    ] = "SPX",
    name: Annotated[str, typer.Option(help="Node name.")] = "gpu-node-0",
    seed: Annotated[int, typer.Option(help="Seed of identities and load profiles.")] = 0,
    follow: Annotated[
        bool,
        typer.Option("--follow", help="Keep updating the readings every second until stopped."),
    ] = False,
) -> None:
    """Build the sysfs, /dev and tool stand-ins of a simulated GPU node under DIRECTORY."""
    import threading
    from pathlib import Path

    from lens.sim.hosts.state import NodeSpec
    from lens.sim.hosts.tree import HostTree

    defaults = {"amd": "MI300X", "nvidia": "H100"}
    if vendor not in defaults:
        fail("usage error", f"--vendor: expected amd or nvidia, got {vendor!r}", errors.EXIT_CONFIG)
    try:
        spec = NodeSpec(
            name=name,
            model=model or defaults[vendor],
            gpus=gpus,
            rdma=rdma,
            compute_partition=partition,
            seed=seed,
        )
    except ValueError as exc:
        fail("usage error", str(exc), errors.EXIT_CONFIG)
    if spec.vendor != vendor:
        fail("usage error", f"--model {spec.model} is not an {vendor} GPU", errors.EXIT_CONFIG)
    try:
        if Path(directory).exists() and not Path(directory).is_dir():
            fail(
                "usage error",
                f"DIRECTORY: {directory} exists and is not a directory",
                errors.EXIT_CONFIG,
            )
        tree = HostTree(Path(directory), spec).build()
    except OSError as exc:  # exists() passes on ENAMETOOLONG; building on any I/O error
        fail(
            "usage error",
            f"DIRECTORY: cannot build the tree in {directory}: {exc}",
            errors.EXIT_CONFIG,
        )
    typer.echo(f"built {spec.name}: {gpus} x {spec.model}, {rdma} RDMA devices under {tree.root}")
    if follow:
        stop = threading.Event()
        try:
            while not stop.wait(1.0):
                tree.update()
        except KeyboardInterrupt:
            typer.echo("stopped")
