from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from lens.runtime import config, errors, launcher
from lens.runtime import logging as lens_logging
from lens.runtime.process import Process
from lens.runtime.settings import Secret


class _Part:
    def __init__(self, name: str, log: list[str], *, fail: bool = False) -> None:
        self.name = name
        self._log = log
        self._fail = fail

    async def start(self) -> None:
        if self._fail:
            raise OSError(f"{self.name} cannot start")
        self._log.append(f"start {self.name}")

    async def stop(self) -> None:
        self._log.append(f"stop {self.name}")


def _role(name: str, log: list[str], *, fail: bool = False) -> launcher.Role:
    def build(cfg: config.Config, process: Process) -> str:
        process.add_part(_Part(f"{name}-part", log, fail=fail))
        process.health.add_readiness(f"{name}-check", lambda: None)
        return name

    return launcher.Role(name=name, starting=f"{name} starting", sections=("jobs",), build=build)


def _config() -> config.Config:
    return config.Config(server=config.ServerConfig(host="127.0.0.1", port=0))


def test_roles_are_built_into_one_process_in_order() -> None:
    log: list[str] = []
    process = Process("t", server=_config().server, service=_config().service)
    built = launcher.assemble(_config(), [_role("a", log), _role("b", log)], process=process)
    assert built == ["a", "b"]
    assert [c.name for c in process.health.readiness().checks] == ["a-check", "b-check"]


def test_a_role_is_launched_once() -> None:
    process = Process("t", server=_config().server, service=_config().service)
    with pytest.raises(ValueError, match="once per process"):
        launcher.assemble(_config(), [_role("a", []), _role("a", [])], process=process)


def test_a_part_that_fails_is_named_in_the_outcome() -> None:
    log: list[str] = []
    outcome = launcher.launch(_config(), [_role("a", log), _role("b", log, fail=True)])
    assert outcome.code == errors.EXIT_FATAL
    assert outcome.failure == "b: b-part: OSError: b-part cannot start"
    assert log == ["start a-part", "stop a-part"], "the started parts stop, in reverse"


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """A buffer the root logger's handler writes to once configured; the logger put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield io.StringIO()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def _assembled(level: str, out: io.StringIO) -> list[dict[str, object]]:
    """The JSON lines of assembling role "a" (sections server, database and jobs) with a
    server address, a database URL and a password set, at `level`."""
    lens_logging.configure(config.LoggingConfig(format="json", level=level), stream=out)
    cfg = config.Config(
        server=config.ServerConfig(host="127.0.0.1", port=0),
        database=config.DatabaseConfig(
            url="postgresql://lens:hunter2@db/lens", password=Secret("hunter3")
        ),
    )
    process = Process("t", server=cfg.server, service=cfg.service)
    role = launcher.Role(
        name="a",
        starting="a starting",
        sections=("server", "database", "jobs"),
        build=lambda _cfg, _process: "a",
    )
    launcher.assemble(cfg, [role], process=process)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_roles_start_line_carries_only_the_settings_that_differ(logged: io.StringIO) -> None:
    # It carried every setting of every section the role reads: 2-3 KB a role (issue 36).
    lines = _assembled("info", logged)
    assert [line["msg"] for line in lines] == ["a starting"]
    assert lines[0]["config"] == {
        "server.host": "127.0.0.1",
        "server.port": 0,
        "database.url": "postgresql://lens:***@db/lens",
        "database.password": "***",
    }
    assert "hunter" not in logged.getvalue()


def test_the_whole_effective_config_is_logged_at_debug(logged: io.StringIO) -> None:
    lines = _assembled("debug", logged)
    (effective,) = [line for line in lines if line["msg"] == "effective config"]
    whole = effective["config"]
    assert isinstance(whole, dict)
    assert set(whole) == {field for field in config.Config.__dataclass_fields__}
    assert whole["jobs"]["grpc_port"] == config.JobsConfig().grpc_port
    assert whole["database"]["password"] == "***"
    assert "hunter" not in logged.getvalue()
