from __future__ import annotations

from pathlib import Path

from lens.runtime import config
from lens.runtime.process import Process
from lens.store import migrating, shared


def test_the_roles_of_a_process_share_one_migrated_database(tmp_path: Path) -> None:
    cfg = config.DatabaseConfig(url=f"sqlite:///{tmp_path}/lens.db")
    process = Process(
        "t",
        server=config.ServerConfig(port=0),
        service=config.ServiceConfig(),
        handle_signals=False,
    )
    first = shared.shared_database(cfg, process)
    second = shared.shared_database(cfg, process)
    assert first is second
    assert all(state.applied_at is not None for state in migrating.status(first))
    process.health.evaluate_readiness()
    assert [(c.name, c.ok) for c in process.health.readiness().checks] == [("database", True)]
