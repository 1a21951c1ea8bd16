"""`lens tune`: the tuning daemon (no subcommand), and `check`, `diff`, `apply`, `restore` of the
node's sysctls and open-file limits against the tuning policy (lens/tune). Exit 2 on a bad
policy or host file; `check` and `diff` exit 1 on drift or pending changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from lens.cli.common import (
    ConfigOption,
    HostRootOption,
    JsonOption,
    fail,
    launch,
    load,
    with_host_root,
)
from lens.runtime import errors

if TYPE_CHECKING:
    from pathlib import Path

    from lens.runtime.config import Config
    from lens.tune.changes import Plan
    from lens.tune.planning import ParameterState
    from lens.tune.rules import Policy

tune_app = typer.Typer(
    help="Node tuning: run the daemon (no subcommand), or check, diff, apply, restore the "
    "node's sysctls and open-file limits against a declarative policy.",
    invoke_without_command=True,
)

PolicyOption = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help="YAML policy file (default: tune.policy_file, else built-in; docs/tune.md).",
        show_default=False,
    ),
]
LabelsOption = Annotated[
    str | None,
    typer.Option(
        "--node-labels",
        help="This node's labels, k=v,... (they select profiles; default: tune.node_labels).",
        show_default=False,
    ),
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Node:
    """What a subcommand works on: the host root, the policy and the node's labels."""

    root: Path
    policy: Policy
    source: str
    labels: dict[str, str]
    record_file: Path


def _node(cfg: Config, policy_path: str | None, node_labels: str | None) -> _Node:
    from pathlib import Path

    from lens.tune import policyfile, rules

    path = cfg.tune.policy_file if policy_path is None else policy_path
    labels = cfg.tune.node_labels if node_labels is None else node_labels
    root = Path(cfg.host.root)
    try:
        return _Node(
            root=root,
            policy=policyfile.read_policy(path),
            source=policyfile.source_name(path),
            labels=rules.parse_labels(labels),
            record_file=root / cfg.tune.record_file,
        )
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)


@contextlib.contextmanager
def _reported() -> Iterator[None]:
    """A bad policy or host file is exit 2, a host file that cannot be read or written exit 1."""
    try:
        yield
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.SourceError as exc:
        fail("source error", str(exc), errors.EXIT_FATAL)


def _print(states: tuple[ParameterState, ...], *, as_json: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from lens.tune import planning

    if as_json:
        parameters = [dataclasses.asdict(state) for state in states]
        document = {"in_sync": all(s.in_sync for s in states), "parameters": parameters}
        typer.echo(json.dumps(document, ensure_ascii=False))
        return
    table = Table("parameter", "place", "desired", "actual", "in sync")
    for state in states:
        mark = "[green]yes[/]" if state.in_sync else "[red]no[/]"
        table.add_row(state.name, state.place, planning.describe(state), state.actual, mark)
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))
    console.print(table)


@tune_app.callback()
def daemon(
    ctx: typer.Context,
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    port: Annotated[
        int | None,
        typer.Option(help="Port of /metrics and health (overrides server.port).", min=0, max=65535),
    ] = None,
) -> None:
    """Run the tuning daemon: drift repaired as files change and at every check, metrics and
    health on the HTTP port."""
    if ctx.invoked_subcommand is not None:
        return
    from lens.cli.roles import with_ports
    from lens.roles.tune import main as tune_main

    launch(with_host_root(with_ports(load(config), port), host_root), tune_main.ROLE)


@tune_app.command()
def check(
    policy: PolicyOption = None,
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    node_labels: LabelsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare this node's sysctls and open-file limits with the policy; exit 1 on drift."""
    from lens.tune import planning

    node = _node(with_host_root(load(config), host_root), policy, node_labels)
    with _reported():
        states = planning.check(node.policy, root=node.root, labels=node.labels, source=node.source)
    _print(states, as_json=as_json)
    if not all(state.in_sync for state in states):
        raise typer.Exit(errors.EXIT_FATAL)


@tune_app.command()
def diff(
    policy: PolicyOption = None,
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    node_labels: LabelsOption = None,
) -> None:
    """Show what apply would change: live values and a unified diff of each file; exit 1 when
    there is something to change."""
    node = _node(with_host_root(load(config), host_root), policy, node_labels)
    planned = _plan(node)
    for live in planned.live:
        typer.echo(f"live {live.key}: {' '.join(live.before.split())} -> {live.after}")
    for write in planned.files:
        typer.echo(write.unified(), nl=False)
    _print_conflicts(planned)
    if planned.empty:
        typer.echo("nothing to change")
        return
    raise typer.Exit(errors.EXIT_FATAL)


@tune_app.command()
def apply(
    policy: PolicyOption = None,
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    node_labels: LabelsOption = None,
) -> None:
    """Set live values and write Lens's own drop-ins; nothing is written when nothing would
    change. Exit 1 when a file read after Lens's sets a value against the policy."""
    from lens.tune import applying

    node = _node(with_host_root(load(config), host_root), policy, node_labels)
    planned = _plan(node)
    with _reported():
        applying.apply(planned, root=node.root, record_file=node.record_file)
    for live in planned.live:
        typer.echo(f"set {live.key} = {live.after} (was {' '.join(live.before.split())})")
    for write in planned.files:
        typer.echo(f"{'removed' if write.after is None else 'wrote'} {write.path}")
    if any(write.after is not None and "systemd" in write.path.parts for write in planned.files):
        typer.echo(
            "nofile in systemd's files applies at boot, or now with `systemctl daemon-reexec` "
            "(and `systemctl restart containerd` for its containers)"
        )
    if planned.empty:
        typer.echo("nothing to change")
    _print_conflicts(planned)
    if planned.conflicts:
        raise typer.Exit(errors.EXIT_FATAL)


@tune_app.command()
def restore(config: ConfigOption = None, host_root: HostRootOption = None) -> None:
    """Put back exactly what Lens changed (its record), then forget it. Stop the daemon first,
    or it applies the policy again."""
    from pathlib import Path

    from lens.tune import restoring

    cfg = with_host_root(load(config), host_root)
    root = Path(cfg.host.root)
    with _reported():
        done = restoring.restore(root=root, record_file=root / cfg.tune.record_file)
    for name in done.files:
        typer.echo(f"restored {root / name}")
    for key in done.sysctls:
        typer.echo(f"restored {key}")
    for note in done.left:
        typer.echo(f"left {note}")
    if not (done.files or done.sysctls or done.left):
        typer.echo("nothing to restore")


def _plan(node: _Node) -> Plan:
    from lens.tune import changes

    with _reported():
        return changes.plan(node.policy, root=node.root, labels=node.labels, source=node.source)


def _print_conflicts(planned: Plan) -> None:
    for conflict in planned.conflicts:
        typer.echo(
            f"lens: conflict: {conflict.parameter} ({conflict.place}): {conflict.detail}",
            err=True,
        )
