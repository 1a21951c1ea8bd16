"""A container's arguments parsed by the `lens` command itself (its typer app, as typer's click
parses them), without running anything: which command they select and the options it gets. The
image's entrypoint is `lens` (Dockerfile), so a container without a command runs `lens ARGS`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import typer
from typer.exceptions import TyperException

from lens.cli import app

# What typer's click raises for arguments it refuses (an unknown option, a bad value, ...).
Refused = TyperException


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    path: tuple[str, ...]  # the command's words after `lens`, e.g. ("controller",)
    params: Mapping[str, Any]  # the selected command's options, converted


def parse(args: Sequence[str]) -> Parsed:
    """The command `lens ARGS` selects; Refused when lens would refuse them."""
    command: Any = typer.main.get_command(app)
    context = command.make_context("lens", list(args))
    path: list[str] = []
    while hasattr(command, "resolve_command"):  # a group of commands
        # Click keeps the subcommand's name apart from its arguments until it invokes it.
        rest = [*getattr(context, "_protected_args", []), *context.args]
        if not rest:
            if not command.invoke_without_command:
                raise AssertionError(f"lens {' '.join(path)} needs a command")
            break
        name, found, remaining = command.resolve_command(context, rest)
        path.append(name)
        context = found.make_context(name, remaining, parent=context)
        command = found
    return Parsed(path=tuple(path), params=dict(context.params))
