from __future__ import annotations

import pytest

from lens.runtime import config, errors, launcher
from lens.runtime.process import Process


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
