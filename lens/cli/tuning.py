"""`lens tune check`: the node's sysctls and open-file limits against the tuning policy
(lens/tune), read-only. Exit 0 in sync, 1 on drift, 2 on a bad policy or host file.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from lens.cli.common import ConfigOption, HostRootOption, JsonOption, fail, load, with_host_root
from lens.runtime import errors

if TYPE_CHECKING:
    from lens.tune.planning import ParameterState
    from lens.tune.rules import Policy

tune_app = typer.Typer(
    help="Node tuning: sysctls and open-file limits as a declarative policy.",
    no_args_is_help=True,
)

PolicyOption = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help="YAML policy file (default: built-in, see docs/tune.md).",
        show_default=False,
    ),
]
LabelsOption = Annotated[
    str,
    typer.Option("--node-labels", help="This node's labels, k=v,... (they select profiles)."),
]


def _policy(path: str | None) -> Policy:
    from pathlib import Path

    from lens.tune import rules

    if path is None:
        return rules.DEFAULT_POLICY
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        fail("config error", f"{path}: cannot read ({exc.strerror})", errors.EXIT_CONFIG)
    return rules.parse_policy(text, source=path)


def _print(states: tuple[ParameterState, ...], *, as_json: bool) -> None:
    import dataclasses

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


@tune_app.command()
def check(
    policy: PolicyOption = None,
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    node_labels: LabelsOption = "",
    as_json: JsonOption = False,
) -> None:
    """Compare this node's sysctls and open-file limits with the policy; exit 1 on drift."""
    from pathlib import Path

    from lens.tune import planning, rules

    root = Path(with_host_root(load(config), host_root).host.root)
    try:
        chosen = _policy(policy)
        labels = rules.parse_labels(node_labels)
        source = policy or "built-in policy"
        states = planning.check(chosen, root=root, labels=labels, source=source)
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.SourceError as exc:
        fail("source error", str(exc), errors.EXIT_FATAL)
    _print(states, as_json=as_json)
    if not all(state.in_sync for state in states):
        raise typer.Exit(errors.EXIT_FATAL)
