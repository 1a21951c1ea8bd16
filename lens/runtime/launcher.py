"""The launcher: one process, the roles it is given, run until a signal; its exit code.

`lens node-agent`, `lens controller` and `lens jobs` launch one role each; `lens up` and
`lens demo` launch several into the same process. Each role is a `Role`:
its name, the config sections it logs at start and its `build(config, process)`, which adds
the role's parts to the Process (runtime/process.py) and returns what tests reach. The
launcher owns what is process-wide: signals, the one HTTP port, the metrics registry,
interpreter tuning, and the order of stopping (reverse of starting, within
`service.stop_timeout_seconds`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lens.runtime import settings
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Role:
    """A role that can be launched: parts added to a process it is given.

    Once built, the launcher logs its `starting` message ("node agent starting") with the
    settings of the config `sections` the role reads that differ from the defaults, and what
    `describe` says of the built role."""

    name: str
    starting: str
    sections: tuple[str, ...]
    build: Callable[[Config, Process], Any]
    describe: Callable[[Any], Mapping[str, object]] = lambda _built: {}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How the process ended: its exit code and, when a part failed, which role's part and how
    ("jobs: event-server: StoreError: ...") and the exception (`cause`)."""

    code: int
    failure: str | None
    cause: BaseException | None = None


def assemble(config: Config, roles: Sequence[Role], *, process: Process) -> list[object]:
    """Build every role into `process`, in order; what each build returned, for tests.

    The whole effective config is logged at debug; each role's `starting` line, at info,
    carries only the settings of its sections that differ from the defaults."""
    names = [role.name for role in roles]
    if len(set(names)) != len(names):
        raise ValueError(f"a role is launched once per process: {names}")
    log.debug("effective config", extra={"config": settings.to_plain(config)})
    built = []
    for role in roles:
        process.building = role.name
        made = role.build(config, process)
        built.append(made)
        log.info(
            role.starting, extra={**role.describe(made), "config": changed(config, role.sections)}
        )
    process.building = ""
    return built


def changed(config: Config, sections: Sequence[str]) -> dict[str, object]:
    """The settings of `sections` that differ from the defaults, by dotted key ("api.port"),
    secrets redacted. Values filled in at load (the data directory, a kubeconfig found)
    differ from their empty defaults, and are shown."""
    defaults = Config()
    differing: dict[str, object] = {}
    for section in sections:
        values = settings.to_plain(getattr(config, section))
        default = settings.to_plain(getattr(defaults, section))
        for key, value in values.items():
            if value != default.get(key):
                differing[f"{section}.{key}"] = value
    return differing


def launch(config: Config, roles: Sequence[Role], *, clock: Clock | None = None) -> Outcome:
    """Build the roles into a new process and run it until SIGTERM or SIGINT; `clock`: the
    process's (default: the system's; `lens demo --speed` runs a faster one)."""
    name = "+".join(role.name for role in roles)
    process = Process(name, server=config.server, service=config.service, clock=clock)
    assemble(config, roles, process=process)
    if len(roles) > 1:
        log.info("process starting", extra={"roles": [role.name for role in roles]})
    process.apply_tuning()
    code = process.run()
    failure = process.failed()
    if failure is not None:
        log.error("process stopped: a part failed", extra={"failure": failure})
    cause = process.service.failure.cause if process.service.failure is not None else None
    return Outcome(code=code, failure=failure, cause=cause)
