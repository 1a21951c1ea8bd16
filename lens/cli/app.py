"""The `lens` command: its command groups, each in a module of lens/cli/ (STYLE S1).

Heavy packages (database drivers, kubernetes, grpc, fastapi, uvicorn) are imported inside the
command that needs them, so `lens --help` stays fast; a test guards that.
"""

from __future__ import annotations

import typer

import lens
from lens.cli import configuring, database, demo, diagnostics, docs, roles, simulators, tuning

app = typer.Typer(
    name="lens",
    help="Lens: GPU-cluster observability for Kubernetes AI/ML clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(configuring.config_app, name="config")
app.add_typer(roles.controller_app, name="controller")
app.add_typer(database.db_app, name="db")
app.add_typer(docs.docs_app, name="docs")
app.add_typer(simulators.sim_app, name="sim")
app.add_typer(tuning.tune_app, name="tune")


@app.command()
def version() -> None:
    """Print the version of Lens."""
    typer.echo(lens.__version__)


app.command("node-agent")(roles.node_agent)
app.command("netflow")(roles.netflow)
app.command("jobs")(roles.jobs)
app.command("api")(roles.api)
app.command("up")(roles.up)
app.command("demo")(demo.demo)
app.command("gpus")(diagnostics.gpus)
app.command("rdma")(diagnostics.rdma)
app.command("containers")(diagnostics.containers)


def main() -> None:
    """Entry point of the `lens` console script."""
    app(prog_name="lens")
