"""Leader election on a Lease in the API emulator: one leader, takeover within a lease period,
prompt handover on release, leadership lost when renewals fail."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import kubernetes
import pytest

from lens.kube.machinery import resources
from lens.kube.machinery.leader import LEASES, LeaderElector, LeaseSettings
from lens.runtime import errors
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests

pytestmark = pytest.mark.slow_timeout

DURATION = 1.5


class Replica:
    def __init__(self, api: kubernetes.client.ApiClient, identity: str) -> None:
        self.events: list[str] = []
        self.elector = LeaderElector(
            api,
            LeaseSettings(namespace="lens", name="ctl", identity=identity, lease_duration=DURATION),
            on_started=lambda: self.events.append("started"),
            on_stopped=lambda: self.events.append("stopped"),
        )


@pytest.fixture
def replicas(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> Iterator[Callable[[str], Replica]]:
    apiserver.create(manifests.namespace("lens"))
    made: list[Replica] = []

    def make(identity: str) -> Replica:
        replica = Replica(api_client, identity)
        replica.elector.start()
        made.append(replica)
        return replica

    yield make
    for replica in made:
        replica.elector.stop()


def _holder(api: kubernetes.client.ApiClient) -> str:
    lease = resources.request_json(api, "GET", LEASES.object_path("lens", "ctl"))
    return str(lease["spec"].get("holderIdentity") or "")


def test_one_leader_and_a_prompt_handover_on_release(
    replicas: Callable[[str], Replica],
    api_client: kubernetes.client.ApiClient,
    eventually: Callable[..., None],
) -> None:
    first = replicas("a")
    assert first.elector.wait_leading(5)
    second = replicas("b")
    time.sleep(DURATION)  # several renewals: the lease never looks stale to b
    assert not second.elector.leading and _holder(api_client) == "a"
    began = time.monotonic()
    first.elector.stop()
    assert first.events == ["started", "stopped"]
    assert second.elector.wait_leading(5)
    assert time.monotonic() - began < DURATION, "released: no need to wait the lease out"
    assert _holder(api_client) == "b"


def test_a_dead_leader_is_replaced_within_a_lease_period(
    apiserver: KubeApiServer,
    replicas: Callable[[str], Replica],
    api_client: kubernetes.client.ApiClient,
) -> None:
    ghost = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "ctl", "namespace": "lens"},
        "spec": {
            "holderIdentity": "crashed",
            "leaseDurationSeconds": DURATION,
            "renewTime": "2026-11-21T00:00:00.000000Z",
            "leaseTransitions": 4,
        },
    }
    apiserver.create(ghost)
    began = time.monotonic()
    successor = replicas("b")
    assert successor.elector.wait_leading(5)
    waited = time.monotonic() - began
    assert DURATION * 0.9 <= waited < DURATION * 2, "waited out one lease, no more"
    lease = resources.request_json(api_client, "GET", LEASES.object_path("lens", "ctl"))
    assert lease["spec"]["leaseTransitions"] == 5 and lease["spec"]["holderIdentity"] == "b"


def test_a_leader_that_cannot_renew_stops_leading_before_its_lease_runs_out(
    apiserver: KubeApiServer,
    replicas: Callable[[str], Replica],
    eventually: Callable[..., None],
) -> None:
    leader = replicas("a")
    assert leader.elector.wait_leading(5)
    apiserver.faults.fail_requests(500, count=100, method="PUT")
    began = time.monotonic()
    eventually(lambda: not leader.elector.leading, timeout=5)
    assert time.monotonic() - began < DURATION
    # Leading ends first, the callback just after (on the elector's thread).
    eventually(lambda: leader.events == ["started", "stopped"], timeout=5)


def test_a_missing_namespace_is_one_plain_line_and_readiness_says_it_until_created(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    caplog: pytest.LogCaptureFixture,
    eventually: Callable[..., None],
) -> None:
    settings = LeaseSettings(
        namespace="lens-system",
        name="ctl",
        identity="a",
        lease_duration=DURATION,
        setting="controller.lease",
    )
    elector = LeaderElector(api_client, settings, on_started=lambda: None, on_stopped=lambda: None)
    elector.start()
    try:

        def says_why() -> bool:
            try:
                elector.check()
            except errors.NoDataError as exc:
                return "kubectl create namespace lens-system" in str(exc)
            return False

        eventually(says_why, timeout=5)
        time.sleep(3 * settings.retry_period)  # retried, not logged again
        failures = [r for r in caplog.records if r.getMessage() == "lease request failed"]
        assert len(failures) == 1
        reason = failures[0].reason  # type: ignore[attr-defined]
        assert reason == (
            "cannot take the Lease lens-system/ctl (controller.lease): namespace 'lens-system'"
            " does not exist; create it (kubectl create namespace lens-system) or name a Lease"
            " in a namespace that exists"
        )
        apiserver.create(manifests.namespace("lens-system"))
        assert elector.wait_leading(5)
        elector.check()
    finally:
        elector.stop()
