"""`lens controller` against two API emulators, recorded: leader election, the watches of
nodes, pods and every owner kind of the scenario's GPU pods, finalizers added and removed, the
kubelet Service and EndpointSlices created, replaced and pruned, a second cluster from the
clusters Secret; then `lens controller release-finalizers` under the rendered RBAC."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lens.kube.machinery import clients
from lens.kube.workloads import uninstall
from lens.kube.workloads.finalizers import FINALIZER
from lens.roles.controller import main as controller_main
from lens.runtime.clock import SystemClock
from lens.runtime.config import Config, ControllerConfig
from lens.sim.kube import selectors
from lens.sim.kube.recording import ApiRequest
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.scenario import manifests, spec
from lens.sim.scenario.player import ScenarioPlayer
from lens.store import database, models
from tests.deploy.roleruns import (
    LOOPBACK,
    Recorded,
    Requests,
    Running,
    Settings,
    database_of,
    emulator,
    ensure_namespace,
    kubeconfig_of,
    process_of,
    put_secret,
    split,
    wait_for,
)

HOME = spec.Scenario(
    name="rbac-home",
    nodes=(spec.NodeGroup(count=2),),
    workloads=(
        spec.Workload(kind="PyTorchJob", name="llama", namespace="ml", replicas=2, gpus_per_pod=4),
        spec.Workload(kind="Deployment", name="serve", namespace="serving", gpus_per_pod=2),
        spec.Workload(kind="StatefulSet", name="rayworker", namespace="ml", gpus_per_pod=1),
        spec.Workload(kind="Job", name="eval", namespace="ml", gpus_per_pod=1, duration=600),
        spec.Workload(kind="Job", name="sweep", namespace="ml", gpus_per_pod=1, duration=600),
        spec.Workload(
            kind="CronJob",
            name="nightly",
            namespace="ml",
            gpus_per_pod=1,
            duration=120,
            schedule_every=900,
        ),
    ),
)
EAST = spec.Scenario(
    name="rbac-east",
    nodes=(spec.NodeGroup(count=1, prefix="east-node"),),
    workloads=(
        spec.Workload(kind="Job", name="east-eval", namespace="ml", gpus_per_pod=1, duration=600),
    ),
)
SLICE_MANAGER = "lens-controller"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseRun:
    """`release-finalizers` under RBAC: its requests, those refused, and what it released."""

    requests: Requests
    refused: Requests
    released: list[uninstall.Released]
    left: list[str]  # objects still holding a Lens finalizer afterwards


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ControllerRun:
    recorded: Recorded
    release: ReleaseRun


def _config(settings: Settings, kube: KubeApiServer, directory: Path) -> Config:
    return Config(
        database=database_of(directory, "controller"),
        server=LOOPBACK,
        kube=kubeconfig_of(kube, directory, "home"),
        controller=ControllerConfig(
            identity="lens-controller-0",
            lease=settings.controller_lease,
            lease_duration_seconds=2.0,
            kubelet_service=settings.kubelet_service,
            kubelet_service_interval_seconds=1.0,
            clusters_secret=settings.clusters_secret,
            clusters_refresh_seconds=1.0,
            finalizer_kinds=settings.finalizer_kinds,
            finalizer_grace_seconds=30.0,
        ),
    )


def _stale_slice(kube: KubeApiServer, settings: Settings) -> None:
    """A slice of the kubelet Service that no node needs any more: the controller deletes it."""
    namespace, service = split(settings.kubelet_service)
    kube.create(
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{service}-ipv6-0",
                "namespace": namespace,
                "labels": {
                    "kubernetes.io/service-name": service,
                    "endpointslice.kubernetes.io/managed-by": SLICE_MANAGER,
                },
            },
            "addressType": "IPv6",
            "endpoints": [{"addresses": ["fd00::1"]}],
            "ports": [],
        }
    )


def _object(kube: KubeApiServer, api_version: str, kind: str, ns: str, name: str) -> Any:
    try:
        return kube.store.get(kube.resource(api_version, kind), ns, name)
    except ApiError:
        return None


def _has_finalizer(kube: KubeApiServer, api_version: str, kind: str, name: str) -> bool:
    found = _object(kube, api_version, kind, "ml", name)
    return found is not None and FINALIZER in (found["metadata"].get("finalizers") or [])


def _workloads(db: Any) -> set[tuple[str, str]]:
    with database.session(db):
        return {(w.cluster, w.name) for w in models.GpuWorkload.select()}


def _all(kube: KubeApiServer, api_version: str, kind: str, namespace: str | None = None) -> Any:
    rtype = kube.resource(api_version, kind)
    everything = selectors.parse_field_selector(None, rtype.kind)
    items, _ = kube.store.select(rtype, namespace, selectors.LabelSelector(), everything)
    return items


def _slices(kube: KubeApiServer, namespace: str) -> dict[str, Any]:
    items = _all(kube, "discovery.k8s.io/v1", "EndpointSlice", namespace)
    return {item["metadata"]["name"]: item for item in items}


def _only_slice(kube: KubeApiServer, namespace: str, service: str) -> bool:
    """The slice of the IPv4 nodes, and the stale IPv6 one gone."""
    return set(_slices(kube, namespace)) == {f"{service}-ipv4-0"}


def _exercise_kubelet_targets(home: KubeApiServer, settings: Settings) -> None:
    """The Service edited by someone else and a node added: both are put right (PUT)."""
    namespace, service = split(settings.kubelet_service)
    services = home.resource("v1", "Service")
    edited = home.store.get(services, namespace, service)
    edited["spec"]["ports"] = [{"name": "other", "port": 1, "protocol": "TCP"}]
    home.store.update(services, namespace, service, edited)
    home.create(manifests.node("gpu-node-0099", model="MI300X", gpus=8, address="192.168.9.9"))

    def put_right() -> bool:
        ports = home.store.get(services, namespace, service)["spec"]["ports"]
        endpoints = _slices(home, namespace).get(f"{service}-ipv4-0", {}).get("endpoints") or []
        addresses = {a for e in endpoints for a in e.get("addresses") or []}
        return len(ports) == 3 and "192.168.9.9" in addresses

    wait_for("the kubelet Service and slice put right", put_right)


def _delete_with_finalizer(home: KubeApiServer) -> None:
    """A Job holding the finalizer deleted: the controller records its end, then lets go."""
    jobs = home.resource("batch/v1", "Job")
    home.store.delete(jobs, "ml", "sweep", propagation="Background")
    wait_for(
        "the deleted Job released", lambda: _object(home, "batch/v1", "Job", "ml", "sweep") is None
    )


def _controller_phase(
    home: KubeApiServer, east: KubeApiServer, settings: Settings, directory: Path
) -> None:
    namespace, service = split(settings.kubelet_service)
    built = controller_main.build(_config(settings, home, directory), process_of("controller"))
    running = Running(built.process)
    try:
        wait_for("leadership", lambda: built.fleet.leading)
        wanted = {
            ("default", "llama"),
            ("default", "eval"),
            ("default", "sweep"),
            ("east", "east-eval"),
        }
        wait_for("the workloads of both clusters", lambda: wanted <= _workloads(built.db))
        for kube, job in ((home, "eval"), (home, "sweep"), (east, "east-eval")):
            wait_for(
                f"the finalizer on {job}",
                functools.partial(_has_finalizer, kube, "batch/v1", "Job", job),
            )
        wait_for(
            "the finalizer on the PyTorchJob",
            lambda: _has_finalizer(home, "kubeflow.org/v1", "PyTorchJob", "llama"),
        )
        for kube in (home, east):
            wait_for("the kubelet slices", functools.partial(_only_slice, kube, namespace, service))
        _exercise_kubelet_targets(home, settings)
        _delete_with_finalizer(home)
    finally:
        running.stop()  # hands the Lease back


def _release_phase(
    home: KubeApiServer, directory: Path, allowed: Callable[[ApiRequest], bool]
) -> ReleaseRun:
    """release-finalizers with the controller's rules enforced, a patch of each kind answered
    409 once (a conflict: the object is read again)."""
    home.clear_recorded()
    refused: Requests = Requests()

    def authorize(request: ApiRequest) -> bool:
        verdict = allowed(request)
        if not verdict:
            refused[request] += 1
        return verdict

    home.authorizer = authorize
    for path in ("/jobs/eval", "/pytorchjobs/llama"):
        home.faults.fail_requests(409, method="PATCH", path_contains=path)
    config = kubeconfig_of(home, directory, "release")
    try:
        with clients.connect(config) as api:
            released = uninstall.release_all(api)
    finally:
        home.authorizer = None
    left = [
        f"{kind} {item['metadata']['name']}"
        for api_version, kind in (("batch/v1", "Job"), ("kubeflow.org/v1", "PyTorchJob"))
        for item in _all(home, api_version, kind)
        if set(item["metadata"].get("finalizers") or []) & set(uninstall.OURS)
    ]
    return ReleaseRun(requests=home.recorded(), refused=refused, released=released, left=left)


def run(
    settings: Settings, directory: Path, allowed: Callable[[ApiRequest], bool]
) -> ControllerRun:
    """The controller's run and then release-finalizers (`allowed`: the controller's RBAC)."""
    with emulator() as home, emulator() as east:
        for kube in (home, east):
            ensure_namespace(kube, settings.namespace)
        for scenario, kube in ((HOME, home), (EAST, east)):
            player = ScenarioPlayer(scenario, kube, clock=SystemClock()).load()
            player.run_until(player.elapsed)  # the CronJob's first Job, due as it was made
        east_kubeconfig = east.write_kubeconfig(directory / "east.kubeconfig", context="east")
        put_secret(home, settings.clusters_secret, {"east": east_kubeconfig.read_text()})
        _stale_slice(home, settings)
        home.clear_recorded()
        east.clear_recorded()
        _controller_phase(home, east, settings, directory)
        recorded = Recorded(home=home.recorded(), remote=east.recorded())
        release = _release_phase(home, directory, allowed)
    return ControllerRun(recorded=recorded, release=release)
