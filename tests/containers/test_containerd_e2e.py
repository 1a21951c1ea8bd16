"""End to end with a real containerd and its CRI plugin: exit statuses and lifecycle order.

Issue 16, points 1 and 2: `lens node-agent` and `lens jobs` as processes, CRI pods whose tasks
the plugin deletes right after they exit, ctr containers whose tasks ctr deletes the same way
(no CRI status behind them), and the agent SIGKILLed while containers exit. Every stored row
must end with the exit code that was knowable (CRI's, or the one the agent saw), never step
back to Created, and every container's event rows must read created, running, exited, deleted.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from lens.containers.node import containerd as boundary
from lens.runtime.config import DatabaseConfig
from lens.sim.containerd import CriPods, PrivateContainerd
from lens.sim.hosts.tree import HostTree
from lens.store import database, models
from tests.roles.node_agent.processes import Pipeline

pytestmark = pytest.mark.slow_timeout

Model = TypeVar("Model", bound=models.LensModel)
ORDER = {"Created": 0, "Running": 1, "OOMKilled": 2, "Exit": 3, "Deleted": 4}


class Stored:
    """What `lens jobs` committed, read from its database."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _read(self, model: type[Model]) -> list[Model]:
        db = database.open_database(DatabaseConfig(url=self.url))
        try:
            with database.session(db):
                return list(model.select())
        finally:
            db.close()

    def rows(self) -> dict[str, tuple[str, int | None]]:
        """Each container's (status, exit code)."""
        return {
            str(r.container_id): (str(r.status), r.exit_code)
            for r in self._read(models.NodeContainer)
        }

    def events(self) -> dict[str, list[tuple[str, int | None, float]]]:
        """Each container's event rows as (type, exit code, epoch seconds), in time order."""
        told: dict[str, list[tuple[str, int | None, float]]] = {}
        for e in self._read(models.NodeContainerEvent):
            when = e.created_at
            stamp = (
                when.timestamp() if when.tzinfo else when.replace(tzinfo=datetime.UTC).timestamp()
            )
            told.setdefault(str(e.container_id), []).append((e.event_type, e.exit_code, stamp))
        return {cid: sorted(rows, key=lambda r: (r[2], ORDER[r[0]])) for cid, rows in told.items()}

    def committed(self) -> int:
        """Records committed, all agent boots together: every listing adds one (an inventory)."""
        return sum(int(r.committed_sequence) for r in self._read(models.EventStream))

    def has(self, expected: Mapping[str, tuple[str, int | None]]) -> bool:
        rows = self.rows()
        return all(rows.get(cid) == want for cid, want in expected.items())


@pytest.fixture
def node(
    cri_containerd: PrivateContainerd,
    mi300x: HostTree,
    empty_database_url: str,
    tmp_path: Path,
    free_port: Callable[[], int],
) -> Iterator[Pipeline]:
    built = Pipeline(
        ctd=cri_containerd,
        tree=mi300x,
        url=empty_database_url,
        tmp=tmp_path,
        ports=[free_port(), free_port(), free_port()],
        reconcile_seconds=1,
    )
    try:
        yield built
    finally:
        built.agent.stop()
        built.jobs.stop()


def _ctr_run(ctd: PrivateContainerd, name: str, script: str, **options: object) -> threading.Thread:
    """A container run by ctr, which deletes its task right after it exits and keeps the
    container (CRI-style, but with no CRI status behind it); returns the thread waiting for it."""
    labels = {
        "io.kubernetes.pod.name": f"pod-{name}",
        "io.kubernetes.pod.namespace": "team-a",
        "io.kubernetes.pod.uid": f"uid-{name}",
        "io.kubernetes.container.name": "main",
    }
    waiter = threading.Thread(
        target=ctd.run,
        args=(name, ["sh", "-c", script]),
        kwargs={"labels": labels, "remove": False, **options},
    )
    waiter.start()
    return waiter


def _check_lifecycles(stored: Stored, names: dict[str, str]) -> None:
    """Every container's event rows in time order read created, running, exited, deleted: no
    status before one it follows, none twice, and exactly one exit."""
    events = stored.events()
    for cid, name in names.items():
        kinds = [kind for kind, _, _ in events[cid]]
        assert [ORDER[k] for k in kinds] == sorted(ORDER[k] for k in kinds), name
        assert len(kinds) == len(set(kinds)) and kinds.count("Exit") == 1, (name, kinds)


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql"], indirect=True)
def test_exit_statuses_survive_deleted_tasks_and_an_agent_killed_while_containers_exit(
    node: Pipeline,
    cri_containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    tmp_path: Path,
    eventually: Callable[..., None],
) -> None:
    ctd, stored = cri_containerd, Stored(empty_database_url)
    pods, client = (
        CriPods(ctd),
        boundary.ContainerdClient(ctd.socket, namespace="k8s.io", timeout_seconds=5),
    )
    gate = tmp_path / "gate"
    gate.mkdir()
    devices = [device_nodes["render"]]
    node.start(eventually)
    try:
        # 1. The agent up: containers that exit at once, their tasks deleted right after.
        pod = pods.run_pod(name="pod-fast", namespace="team-a", uid="uid-fast")
        fast = pods.start_container(pod, "main", ["sh", "-c", "exit 3"], devices=devices)
        _ctr_run(ctd, "ctr-fast", "exit 5", devices=devices).join(30)
        eventually(lambda: stored.has({fast: ("Exit", 3), "ctr-fast": ("Exit", 5)}), timeout=30)
        # Reconciliations run (every second) while the tasks are gone: still exited, same code.
        since = stored.committed()
        eventually(lambda: stored.committed() >= since + 3, timeout=30)
        assert stored.has({fast: ("Exit", 3), "ctr-fast": ("Exit", 5)})

        # 2. The agent SIGKILLed while containers exit: they wait for the gate, opened once
        # the agent is dead; CRI then deletes their tasks and keeps their statuses.
        wait = f"while ! cat {gate}/open; do sleep 0.05; done"
        slow = {
            pods.start_container(
                pods.run_pod(name=f"pod-slow-{i}", namespace="team-a", uid=f"uid-slow-{i}"),
                "main",
                ["sh", "-c", f"{wait}; exit {10 + i}"],
                devices=devices,
                mounts=[gate],
            ): 10 + i
            for i in range(3)
        }
        ctr_slow = _ctr_run(ctd, "ctr-slow", f"{wait}; exit 7", devices=devices, mounts=[gate])
        running = {cid: ("Running", None) for cid in [*slow, "ctr-slow"]}
        eventually(lambda: stored.has(running), timeout=30)
        node.agent.kill()
        (gate / "open").write_text("")
        ctr_slow.join(30)
        for cid in slow:
            eventually(lambda cid=cid: _cri_state(client, cid) == "exited", timeout=30)
        node.agent.start()
        # CRI's statuses give the codes; ctr's container has none: exited, code unknown.
        exits = {cid: ("Exit", code) for cid, code in slow.items()}
        eventually(lambda: stored.has({**exits, "ctr-slow": ("Exit", None)}), timeout=30)
        # The restarted agent knows nothing of the first containers, whose tasks are gone:
        # the rows keep their codes (from CRI, or as stored: ctr-fast's 5 is no one's now).
        since = stored.committed()
        eventually(lambda: stored.committed() >= since + 2, timeout=30)
        assert stored.has({fast: ("Exit", 3), "ctr-fast": ("Exit", 5)})

        # 3. Removed: deleted, each with the exit code it had.
        pods.remove_pods()
        for name in ("ctr-fast", "ctr-slow"):
            ctd.ctr("containers", "delete", name)
        codes = {fast: 3, **slow, "ctr-fast": 5, "ctr-slow": None}
        eventually(
            lambda: stored.has({cid: ("Deleted", code) for cid, code in codes.items()}), timeout=30
        )
        _check_lifecycles(stored, {cid: cid for cid in codes})
        for cid, rows in stored.events().items():
            if cid in slow:
                assert [(k, c) for k, c, _ in rows if k == "Exit"] == [("Exit", slow[cid])]
    finally:
        pods.remove_pods()
        pods.close()
        client.close()
        for name in ("ctr-fast", "ctr-slow"):
            ctd.ctr("containers", "delete", name, check=False)


def _cri_state(client: boundary.ContainerdClient, container_id: str) -> str | None:
    status = client.last_status(container_id)
    return None if status is None else status.state
