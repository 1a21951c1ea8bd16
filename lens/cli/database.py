"""`lens db migrate` and `lens db status`: the SQL store's schema."""

from __future__ import annotations

from typing import Annotated

import typer

from lens.cli.common import ConfigOption, fail, load
from lens.runtime import errors

db_app = typer.Typer(help="Manage the SQL store.", no_args_is_help=True)


@db_app.command("migrate")
def db_migrate(config: ConfigOption = None) -> None:
    """Apply pending schema migrations (safe to run from several processes at once)."""
    from lens.runtime import logging as lens_logging
    from lens.store import database, migrating

    cfg = load(config)
    lens_logging.configure(cfg.logging)
    try:
        db = database.open_database(cfg.database)
        applied = migrating.migrate(db)
    except errors.StoreError as exc:
        fail("database error", str(exc), errors.EXIT_FATAL)
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

    cfg = load(config)
    try:
        db = database.open_database(cfg.database)
        states = migrating.status(db)
    except errors.StoreError as exc:
        fail("database error", str(exc), errors.EXIT_FATAL)
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
