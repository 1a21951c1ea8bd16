"""The `lens` command: loads the config once and hands each command its section (STYLE S1).

Heavy packages (database drivers, kubernetes, grpc, fastapi, uvicorn) are imported inside the
command that needs them, so `lens --help` stays fast; a test guards that.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, NoReturn

import typer

import lens
from lens.runtime import config as config_module
from lens.runtime import errors

app = typer.Typer(
    name="lens",
    help="Lens: GPU-cluster observability for Kubernetes AI/ML clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)
db_app = typer.Typer(help="Manage the SQL store.", no_args_is_help=True)
docs_app = typer.Typer(help="Generate reference documents.", no_args_is_help=True)
sim_app = typer.Typer(
    help="Simulators for tests and demos (never for production).", no_args_is_help=True
)
controller_app = typer.Typer(
    help="Run the controller (no subcommand), or undo what it did to the cluster.",
    invoke_without_command=True,
)
app.add_typer(config_app, name="config")
app.add_typer(controller_app, name="controller")
app.add_typer(db_app, name="db")
app.add_typer(docs_app, name="docs")
app.add_typer(sim_app, name="sim")

ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config file (default: $LENS_CONFIG, else built-in defaults).",
        show_default=False,
    ),
]


def _fail(kind: str, message: str, code: int) -> NoReturn:
    typer.echo(f"lens: {kind}: {message}", err=True)
    raise typer.Exit(code)


def _run_role(run: Callable[[config_module.Config], int], cfg: config_module.Config) -> NoReturn:
    """Configure logging, run a long-running role and exit with its code (or a one-line error)."""
    from lens.runtime import logging as lens_logging

    lens_logging.configure(cfg.logging)
    try:
        code = run(cfg)
    except errors.ConfigError as exc:
        _fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.StoreError as exc:
        _fail("store error", str(exc), errors.EXIT_FATAL)
    raise typer.Exit(code)


def _load(path: str | None) -> config_module.Config:
    try:
        return config_module.load(path)
    except errors.ConfigError as exc:
        _fail("config error", str(exc), errors.EXIT_CONFIG)


@app.command()
def version() -> None:
    """Print the version of Lens."""
    typer.echo(lens.__version__)


@config_app.command("check")
def config_check(config: ConfigOption = None) -> None:
    """Validate the config and print the effective values, secrets redacted."""
    import yaml

    from lens.runtime import settings

    cfg = _load(config)
    typer.echo(yaml.safe_dump(settings.to_plain(cfg), sort_keys=False).rstrip())


@config_app.command("example")
def config_example() -> None:
    """Print every config key with its default and help (config.example.yaml)."""
    typer.echo(config_module.example(), nl=False)


@db_app.command("migrate")
def db_migrate(config: ConfigOption = None) -> None:
    """Apply pending schema migrations (safe to run from several processes at once)."""
    from lens.runtime import logging as lens_logging
    from lens.store import database, migrating

    cfg = _load(config)
    lens_logging.configure(cfg.logging)
    try:
        db = database.open_database(cfg.database)
        applied = migrating.migrate(db)
    except errors.StoreError as exc:
        _fail("database error", str(exc), errors.EXIT_FATAL)
    if applied:
        typer.echo(f"applied {len(applied)} migration(s): {', '.join(applied)}")
    else:
        typer.echo("schema is up to date")


@db_app.command("status")
def db_status(
    config: ConfigOption = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit with code 1 when migrations are pending.")
    ] = False,
) -> None:
    """Show the database in use and which migrations are applied or pending."""
    from rich.console import Console
    from rich.table import Table

    from lens.runtime import dburl
    from lens.store import database, migrating

    cfg = _load(config)
    try:
        db = database.open_database(cfg.database)
        states = migrating.status(db)
    except errors.StoreError as exc:
        _fail("database error", str(exc), errors.EXIT_FATAL)
    table = Table("migration", "applied at", title=dburl.redact_url(cfg.database.url))
    for state in states:
        applied = state.applied_at.isoformat(timespec="seconds") if state.applied_at else "pending"
        name = state.name if state.has_file else f"{state.name} (file missing)"
        table.add_row(name, applied)
    Console().print(table)
    waiting = [s.name for s in states if s.applied_at is None]
    typer.echo(f"{len(waiting)} pending" if waiting else "schema is up to date")
    if check and waiting:
        raise typer.Exit(errors.EXIT_FATAL)


@docs_app.command("metrics")
def docs_metrics() -> None:
    """Print docs/metrics.md: every metric family with its type, labels and help."""
    from lens.roles.node_agent import collectors
    from lens.runtime import kit, metricsdoc

    defaults = config_module.Config()
    runtime = kit.build("docs", server=defaults.server, service=defaults.service)
    from lens.containers import receiving, shipping
    from lens.kube import syncmetrics
    from lens.runtime.selfmetrics import SelfMetrics

    agent_events, jobs_events = SelfMetrics(process=False), SelfMetrics(process=False)
    controller = SelfMetrics(process=False)
    shipping.ShipperMetrics(agent_events)
    receiving.ReceiverMetrics(jobs_events)
    syncmetrics.SyncMetrics(controller)
    controller.gauge(*syncmetrics.LEADER_GAUGE)
    sections = [
        ("Runtime (every role)", runtime.metrics.declared),
        *collectors.metric_docs(),
        ("Node agent: container events", agent_events.declared),
        ("Jobs: container event server", jobs_events.declared),
        ("Controller", controller.declared),
    ]
    typer.echo(metricsdoc.render_markdown(sections), nl=False)


HostRootOption = Annotated[
    str | None,
    typer.Option(
        "--host-root",
        help="Read the host's files under this directory (overrides host.root).",
        show_default=False,
    ),
]


@app.command("node-agent")
def node_agent(
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    port: Annotated[
        int | None, typer.Option(help="Port of /metrics and the REST API (overrides server.port).")
    ] = None,
) -> None:
    """Run the per-node agent: GPU, DRI, RDMA and kubelet collectors, /metrics and REST."""
    import dataclasses

    from lens.roles.node_agent import main as node_agent_main
    from lens.runtime import logging as lens_logging

    cfg = _load(config)
    if host_root is not None:
        cfg = dataclasses.replace(cfg, host=dataclasses.replace(cfg.host, root=host_root))
    if port is not None:
        cfg = dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, port=port))
    lens_logging.configure(cfg.logging)
    try:
        code = node_agent_main.run(cfg)
    except errors.ConfigError as exc:
        _fail("config error", str(exc), errors.EXIT_CONFIG)
    raise typer.Exit(code)


@app.command("jobs")
def jobs_command(
    config: ConfigOption = None,
    port: Annotated[
        int | None, typer.Option(help="Port of /metrics and health (overrides server.port).")
    ] = None,
    grpc_port: Annotated[
        int | None, typer.Option(help="Port of the event server (overrides jobs.grpc_port).")
    ] = None,
) -> None:
    """Run the jobs role: the gRPC container event server writing to the database."""
    import dataclasses

    from lens.roles.jobs import main as jobs_main

    cfg = _load(config)
    if port is not None:
        cfg = dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, port=port))
    if grpc_port is not None:
        cfg = dataclasses.replace(cfg, jobs=dataclasses.replace(cfg.jobs, grpc_port=grpc_port))
    _run_role(jobs_main.run, cfg)


@controller_app.callback()
def controller_command(
    ctx: typer.Context,
    config: ConfigOption = None,
    port: Annotated[
        int | None, typer.Option(help="Port of /metrics and health (overrides server.port).")
    ] = None,
) -> None:
    """Run the controller: GPU pods and their workloads from the Kubernetes API into the store."""
    if ctx.invoked_subcommand is not None:
        return
    import dataclasses

    from lens.roles.controller import main as controller_main

    cfg = _load(config)
    if port is not None:
        cfg = dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, port=port))
    _run_role(controller_main.run, cfg)


@controller_app.command("release-finalizers")
def release_finalizers_command(config: ConfigOption = None) -> None:
    """Remove every Lens finalizer from the cluster (the uninstall path; stop the controller
    first, or it adds them back)."""
    from lens.kube import clients, uninstall

    cfg = _load(config)
    try:
        with clients.connect(cfg.kube) as api:
            released = uninstall.release_all(api)
    except errors.ConfigError as exc:
        _fail("config error", str(exc), errors.EXIT_CONFIG)
    except (errors.LensError, OSError) as exc:
        _fail("release-finalizers", str(exc), errors.EXIT_FATAL)
    for item in released:
        where = f"{item.namespace}/{item.name}" if item.namespace else item.name
        typer.echo(f"released {item.kind} {where}")
    typer.echo(f"{len(released)} finalizer(s) released")


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
WatchOption = Annotated[
    bool, typer.Option("--watch", "-w", help="Refresh until Ctrl-C (JSON: one line per read).")
]
IntervalOption = Annotated[
    float, typer.Option(help="Seconds between refreshes with --watch.", min=0.1)
]


def _diagnose(
    kind: str, host_root: str | None, as_json: bool, watch: bool, interval: float
) -> None:
    from rich.console import Console

    from lens.roles.diagnostics import gpus, rdma, showing

    root = host_root or "/"
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))  # a file or a pipe: don't wrap rows
    show = functools.partial(
        showing.show, console=console, as_json=as_json, watch=watch, interval=interval
    )
    try:
        found = show(gpus.diagnostic(root)) if kind == "gpus" else show(rdma.diagnostic(root))
    except KeyboardInterrupt:
        return
    if not found:
        _fail("nothing found", f"no {'GPUs' if kind == 'gpus' else 'RDMA devices'} under {root}", 1)


@app.command("gpus")
def gpus_command(
    host_root: HostRootOption = None,
    as_json: JsonOption = False,
    watch: WatchOption = False,
    interval: IntervalOption = 1.0,
) -> None:
    """Show this node's GPUs: identity, use, memory, power, temperature, ECC, DRI nodes."""
    _diagnose("gpus", host_root, as_json, watch, interval)


@app.command("rdma")
def rdma_command(
    host_root: HostRootOption = None,
    as_json: JsonOption = False,
    watch: WatchOption = False,
    interval: IntervalOption = 1.0,
) -> None:
    """Show this node's RDMA devices and ports: state, rate, counters, uverbs, throughput."""
    _diagnose("rdma", host_root, as_json, watch, interval)


@app.command("containers")
def containers_command(
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="containerd's socket (overrides containers.containerd_address).",
            show_default=False,
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            help="containerd namespace (overrides containers.namespace).", show_default=False
        ),
    ] = None,
    all_containers: Annotated[
        bool, typer.Option("--all", help="Also containers given no GPU or RDMA device.")
    ] = False,
    docker_address: Annotated[
        str | None,
        typer.Option(
            "--docker-address",
            help="Docker Engine's socket, read too (overrides containers.docker_address).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    watch: WatchOption = False,
    interval: IntervalOption = 2.0,
) -> None:
    """Show this node's live containers with their pods, GPUs and RDMA devices (from containerd,
    and Docker when configured)."""
    from rich.console import Console

    from lens.roles.diagnostics import containers, showing

    cfg = _load(config)
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))
    try:
        diagnostic = containers.diagnostic(
            host_root or cfg.host.root,
            address=cfg.containers.containerd_address if address is None else address,
            namespace=namespace or cfg.containers.namespace,
            all_containers=all_containers or cfg.containers.all_containers,
            pod_resources_socket=cfg.containers.pod_resources_socket,
            docker_address=(
                cfg.containers.docker_address if docker_address is None else docker_address
            ),
        )
        showing.show(diagnostic, console=console, as_json=as_json, watch=watch, interval=interval)
    except KeyboardInterrupt:
        return
    except errors.ConfigError as exc:
        _fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.SourceError as exc:
        _fail("containerd unreachable", str(exc), errors.EXIT_FATAL)


@sim_app.command("kube")
def sim_kube(
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 6443,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    kubeconfig: Annotated[
        str | None, typer.Option(help="Write a kubeconfig for this server to this file.")
    ] = None,
    history: Annotated[int, typer.Option(help="Watch events kept per resource type.")] = 100,
    scenario: Annotated[
        str | None, typer.Option(help="Load and replay a preset cluster: small, medium or large.")
    ] = None,
    speed: Annotated[
        float, typer.Option(help="How many times faster than real time to replay.")
    ] = 1.0,
) -> None:
    """Serve a simulated Kubernetes API until stopped (Ctrl-C or SIGTERM)."""
    from pathlib import Path

    from lens.runtime import lifecycle
    from lens.runtime import logging as lens_logging
    from lens.sim.kube.server import KubeApiServer, ServerPart
    from lens.sim.scenario import replaying, spec
    from lens.sim.scenario.player import ScenarioPlayer

    lens_logging.configure(config_module.LoggingConfig())
    try:
        chosen = spec.preset(scenario) if scenario else None
        clock = replaying.ScaledClock(speed)
    except ValueError as exc:
        _fail("usage error", str(exc), errors.EXIT_CONFIG)
    server = KubeApiServer(host=host, port=port, history_size=history, clock=clock)
    parts: list[lifecycle.Part] = [ServerPart(server)]
    if chosen is not None:
        player = ScenarioPlayer(chosen, server, clock=clock).load()
        parts.append(replaying.ReplayPart(player))
        typer.echo(
            f"scenario {chosen.name}: {len(chosen.node_names)} nodes, {chosen.gpu_count} GPUs"
        )
    typer.echo(f"simulated Kubernetes API at {server.url}")
    if kubeconfig:
        typer.echo(f"kubeconfig: {server.write_kubeconfig(Path(kubeconfig))}")
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
        _fail(
            "usage error", f"--vendor: expected amd or nvidia, got {vendor!r}", errors.EXIT_CONFIG
        )
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
        _fail("usage error", str(exc), errors.EXIT_CONFIG)
    if spec.vendor != vendor:
        _fail("usage error", f"--model {spec.model} is not an {vendor} GPU", errors.EXIT_CONFIG)
    tree = HostTree(Path(directory), spec).build()
    typer.echo(f"built {spec.name}: {gpus} x {spec.model}, {rdma} RDMA devices under {tree.root}")
    if follow:
        stop = threading.Event()
        try:
            while not stop.wait(1.0):
                tree.update()
        except KeyboardInterrupt:
            typer.echo("stopped")


def main() -> None:
    """Entry point of the `lens` console script."""
    app(prog_name="lens")
