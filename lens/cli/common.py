"""What every `lens` command shares: the options, loading the config once, one-line failures,
and launching roles (the one place a command runs a long-running process).

Heavy packages, and the config (YAML and its sections), are imported inside the command that
needs them, so `lens --help` stays fast.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from lens.runtime import errors

if TYPE_CHECKING:
    from lens.runtime.clock import Clock
    from lens.runtime.config import Config
    from lens.runtime.launcher import Role

ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config file (default: $LENS_CONFIG, else built-in defaults).",
        show_default=False,
    ),
]
HostRootOption = Annotated[
    str | None,
    typer.Option(
        "--host-root",
        help="Read the host's files under this directory (overrides host.root).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
WatchOption = Annotated[
    bool, typer.Option("--watch", "-w", help="Refresh until Ctrl-C (JSON: one line per read).")
]
IntervalOption = Annotated[
    float, typer.Option(help="Seconds between refreshes with --watch.", min=0.1, max=86400)
]


def fail(kind: str, message: str, code: int) -> NoReturn:
    """One line on stderr, `lens: KIND: MESSAGE`, and exit `code`."""
    typer.echo(f"lens: {kind}: {one_line(message)}", err=True)
    raise typer.Exit(code)


def one_line(message: str) -> str:
    """`message` with control characters escaped: a value the user gave, quoted in a message,
    may hold a newline, and the error must stay one line."""
    return "".join(
        repr(char)[1:-1] if unicodedata.category(char) in _CONTROL else char for char in message
    )


_CONTROL = frozenset({"Cc", "Zl", "Zp"})


def load(path: str | None) -> Config:
    """The effective config, or a one-line config error and exit code 2."""
    from lens.runtime import config

    try:
        return config.load(path)
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)


def with_host_root(cfg: Config, host_root: str | None) -> Config:
    """The config with --host-root applied; a host root (flag or host.root) that is no
    directory is a one-line config error and exit 2, before anything reads under it."""
    import dataclasses
    from pathlib import Path

    if host_root is not None:
        cfg = dataclasses.replace(cfg, host=dataclasses.replace(cfg.host, root=host_root))
    try:
        problem = "" if Path(cfg.host.root).is_dir() else "expected a directory"
    except OSError as exc:  # is_dir() passes on ENAMETOOLONG, EACCES on a parent and the like
        problem = f"expected a directory ({exc.strerror})"
    if problem:
        where = "--host-root" if host_root is not None else "host.root"
        fail("config error", f"{where}: {problem}, got {cfg.host.root!r}", errors.EXIT_CONFIG)
    return cfg


# The flag of the port settings most commands take (--port); `launch` is told of others.
PORT_FLAGS: Mapping[str, str] = {"server.port": "--port"}


def launch(
    cfg: Config, *roles: Role, clock: Clock | None = None, flags: Mapping[str, str] = PORT_FLAGS
) -> NoReturn:
    """Configure logging, run the roles in one process until stopped, exit with its code.

    A bad config or an unusable store at start is one line and exit 2 or 1; a part that fails
    while running is named on the last line ("lens: part failed: jobs: event-server: ...").
    An address a server cannot listen on is one line naming the setting, its environment
    variable and the command's flag (`flags`: setting key → flag) that move it, and exit 1.
    """
    from lens.runtime import launcher
    from lens.runtime import logging as lens_logging

    lens_logging.configure(cfg.logging)
    try:
        outcome = launcher.launch(cfg, roles, clock=clock)
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)
    except errors.StoreError as exc:
        fail("store error", str(exc), errors.EXIT_FATAL)
    if isinstance(outcome.cause, errors.ListenError):
        message = outcome.cause.describe(flags.get(outcome.cause.key, ""))
        typer.echo(f"lens: {one_line(message)}", err=True)
        raise typer.Exit(outcome.code)
    if outcome.failure is not None:
        fail("part failed", outcome.failure, outcome.code)
    raise typer.Exit(outcome.code)
