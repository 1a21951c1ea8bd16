"""`lens gpus`, `lens rdma`, `lens containers`: what the node agent reads, on a node's shell.

Each honours the config file like the roles do (`host.root`, tools and their timeout,
`containers.*` addresses and timeouts); flags override their keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from lens.cli.common import (
    ConfigOption,
    HostRootOption,
    IntervalOption,
    JsonOption,
    WatchOption,
    fail,
    load,
    with_host_root,
)
from lens.runtime import errors

if TYPE_CHECKING:
    from rich.console import Console

    from lens.roles.diagnostics.gpus import GpuReport
    from lens.roles.diagnostics.rdma import RdmaReport
    from lens.roles.diagnostics.showing import Diagnostic
    from lens.runtime.config import Config, HostConfig


R = TypeVar("R")


def _config(config: str | None, host_root: str | None) -> Config:
    return with_host_root(load(config), host_root)


def _console() -> Console:
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))  # a file or a pipe: don't wrap rows
    return console


def _show(diagnostic: Diagnostic[R], *, as_json: bool, watch: bool, interval: float) -> bool:
    """Print the diagnostic (once, or until Ctrl-C); whether it found anything."""
    from lens.roles.diagnostics import showing

    try:
        return showing.show(
            diagnostic, console=_console(), as_json=as_json, watch=watch, interval=interval
        )
    except KeyboardInterrupt:
        return True


def _device_command(
    make: Callable[[HostConfig], Diagnostic[R]], *, what: str, doc: str
) -> Callable[..., None]:
    """`lens gpus` or `lens rdma`: the diagnostic `make` builds for the host of the config;
    exit 1 when it finds no `what`."""

    def command(
        config: ConfigOption = None,
        host_root: HostRootOption = None,
        as_json: JsonOption = False,
        watch: WatchOption = False,
        interval: IntervalOption = 1.0,
    ) -> None:
        host = _config(config, host_root).host
        found = _show(make(host), as_json=as_json, watch=watch, interval=interval)
        if not found:
            fail("nothing found", f"no {what} under {host.root}", errors.EXIT_FATAL)

    command.__doc__ = doc
    return command


def _gpu_diagnostic(host: HostConfig) -> Diagnostic[GpuReport]:
    from lens.roles.diagnostics import gpus as gpu_diagnostic

    return gpu_diagnostic.diagnostic(host)


def _rdma_diagnostic(host: HostConfig) -> Diagnostic[RdmaReport]:
    from lens.roles.diagnostics import rdma as rdma_diagnostic

    return rdma_diagnostic.diagnostic(host)


gpus = _device_command(
    _gpu_diagnostic,
    what="GPUs",
    doc="Show this node's GPUs: identity, use, memory, power, temperature, ECC, DRI nodes.",
)
rdma = _device_command(
    _rdma_diagnostic,
    what="RDMA devices",
    doc="Show this node's RDMA devices and ports: state, rate, counters, uverbs, throughput.",
)


def containers(
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
    from lens.roles.diagnostics import containers as container_diagnostic

    cfg = _config(config, host_root)
    given = cfg.containers
    sections = dataclasses.replace(
        given,
        containerd_address=given.containerd_address if address is None else address,
        namespace=namespace or given.namespace,
        all_containers=all_containers or given.all_containers,
        docker_address=given.docker_address if docker_address is None else docker_address,
    )
    try:
        diagnostic = container_diagnostic.diagnostic(cfg.host, sections)
        _show(diagnostic, as_json=as_json, watch=watch, interval=interval)
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.SourceError as exc:
        fail("containerd unreachable", str(exc), errors.EXIT_FATAL)
