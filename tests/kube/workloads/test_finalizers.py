"""Lens's finalizer on opted-in kinds, on the small scenario: added to tracked workloads only,
released once the final state is committed, released anyway after the grace when the database
is down (counted), and never clobbering other finalizers."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg2
import pytest

from lens.kube.workloads import finalizers
from lens.kube.workloads.finalizers import FINALIZER
from lens.store import models

from ..conftest import Played

pytestmark = pytest.mark.slow_timeout


def _job(played: Played, name: str) -> dict[str, object] | None:
    try:
        return played.kube.store.get(played.kube.resource("batch/v1", "Job"), "ml", name)
    except Exception:  # gone
        return None


def _finalizers(played: Played, name: str) -> list[str]:
    job = _job(played, name)
    return list(job["metadata"].get("finalizers") or []) if job else []  # type: ignore[index]


def _delete(played: Played, name: str) -> None:
    played.kube.store.delete(
        played.kube.resource("batch/v1", "Job"), "ml", name, propagation="Background"
    )


def _counted(played: Played, name: str) -> float | None:
    return played.metrics.registry.get_sample_value(name, {"cluster": "c1"})


def _status(name: str) -> str | None:
    row = models.GpuWorkload.get_or_none(models.GpuWorkload.name == name)
    return row.status if row is not None else None


def test_tracked_workloads_carry_it_until_their_final_state_is_stored(
    played: Played, eventually: Callable[..., None]
) -> None:
    played.player.run_until(100)
    sync = played.sync(finalizer_kinds=("Job",), finalizer_grace_seconds=30)
    eventually(lambda: FINALIZER in _finalizers(played, "eval-mmlu"), timeout=20)
    deployments = played.kube.resource("apps/v1", "Deployment")
    serve = played.kube.store.get(deployments, "serving", "vllm-serve")
    assert FINALIZER not in (serve["metadata"].get("finalizers") or []), "only opted-in kinds"
    job = _job(played, "eval-mmlu")
    assert job is not None
    other = [*job["metadata"]["finalizers"], "example.com/other"]  # type: ignore[index]
    played.kube.store.patch(
        played.kube.resource("batch/v1", "Job"),
        "ml",
        "eval-mmlu",
        "json",
        finalizers.finalizers_patch(job, other),  # type: ignore[arg-type]
    )
    began = time.monotonic()
    _delete(played, "eval-mmlu")
    eventually(lambda: _finalizers(played, "eval-mmlu") == ["example.com/other"], timeout=10)
    released_after = time.monotonic() - began
    assert _status("eval-mmlu") == "Deleted", "the final state was stored first"
    assert released_after < 2.0
    # Counted once the patch returns to the keeper, which is after the store shows it.
    eventually(lambda: _counted(played, "lens_controller_finalizers_released_total") == 1)
    assert sync.finalizers is not None


@pytest.mark.parametrize("database_engine", ["postgresql"], indirect=True)
def test_a_database_outage_holds_a_deletion_no_longer_than_the_grace(
    played: Played, eventually: Callable[..., None]
) -> None:
    """The outage: PostgreSQL refuses the test database's connections and drops the open ones."""
    played.player.run_until(100)
    sync = played.sync(finalizer_kinds=("Job",), finalizer_grace_seconds=1.5)
    eventually(lambda: FINALIZER in _finalizers(played, "eval-mmlu"), timeout=20)
    name = played.db.database
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
    try:
        began = time.monotonic()
        _delete(played, "eval-mmlu")
        eventually(lambda: _job(played, "eval-mmlu") is None, timeout=10)
        waited = time.monotonic() - began
        assert 1.4 <= waited < 4.0
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        admin.close()
    eventually(lambda: _counted(played, "lens_controller_finalizers_forced_total") == 1)
    assert sync.batcher.pending > 0 or _status("eval-mmlu") == "Deleted"
    eventually(lambda: _status("eval-mmlu") == "Deleted", timeout=20)  # nothing lost, only late


def test_the_patch_is_guarded_by_the_version_it_was_read_from() -> None:
    obj = {"metadata": {"resourceVersion": "42", "finalizers": ["a"]}}
    patch = finalizers.finalizers_patch(obj, ["a", FINALIZER])
    assert patch[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "42"}
    assert patch[1]["value"] == ["a", FINALIZER]
