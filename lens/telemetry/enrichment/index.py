"""The in-memory enrichment index: which pod holds each GPU and RDMA device of each node, pods by
uid and by namespace and name, and each pod's top-level workload with its team.

loading.py is its one writer; relabeling.py reads it from many request threads through
shared.SharedIndex, which guards it with a lock and counts its generations. Nothing here reads the
database or the clock: facts come in with their times.
"""

from __future__ import annotations

import dataclasses
import datetime
import heapq

from lens.telemetry.enrichment.identity import KeyKind, SeriesIdentity

GPU, RDMA = "gpu", "rdma"  # DeviceFacts.kind
DeviceRef = tuple[str, str, str]  # (node, GPU or RDMA, normal GPU uuid or RDMA device name)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodFacts:
    """A pod as gpu_pods has it (or as its containers name it, when gpu_pods lacks it)."""

    uid: str
    name: str
    namespace: str
    node: str
    ended: bool  # deleted, or Succeeded or Failed
    owner_uid: str = ""
    stamp: datetime.datetime  # when its writer last changed it, by the writer's clock


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceFacts:
    kind: str  # GPU or RDMA
    number: int  # the GPU's index as Lens numbers GPUs (-1: unknown)
    id: str  # normal GPU uuid, or RDMA device name


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainerFacts:
    """A container with devices (node_containers and node_container_devices)."""

    container_id: str
    pod_uid: str
    pod_name: str
    pod_namespace: str
    node: str
    live: bool  # Created or Running
    stamp: datetime.datetime
    devices: tuple[DeviceFacts, ...]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuFacts:
    """A GPU a node reported (gpu_devices), with its keys normalised (identity.py); '' unknown."""

    row_id: int
    node: str
    uuid: str
    index: str
    pci: str
    serial: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    uid: str
    kind: str
    name: str
    team: str  # '' none


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Attribution:
    """The pod a series concerns and its top-level workload (None: its row is not read yet)."""

    pod_uid: str
    pod_name: str
    namespace: str
    top_uid: str  # '' for a pod without an owner
    workload: Workload | None


@dataclasses.dataclass(slots=True, kw_only=True)
class _Pod:
    facts: PodFacts
    from_row: bool  # False: known from its containers only
    ended_at: datetime.datetime | None  # by the reader's clock
    top: str = ""
    containers: set[str] = dataclasses.field(default_factory=set)

    def preference(self) -> tuple[bool, datetime.datetime, datetime.datetime, str]:
        """Larger is preferred: live pods, then the latest ended, then the latest changed."""
        return (self.ended_at is None, self.ended_at or _EPOCH, self.facts.stamp, self.facts.uid)


def _bump(counts: dict[str, int], key: str, by: int) -> None:
    value = counts.get(key, 0) + by
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)


class EnrichmentIndex:
    """The maps; not thread-safe: SharedIndex holds the lock around every use."""

    def __init__(self) -> None:
        self._pods: dict[str, _Pod] = {}
        self._names: dict[tuple[str, str], set[str]] = {}
        self._top_pods: dict[str, set[str]] = {}
        self._workloads: dict[str, Workload] = {}
        self._containers: dict[str, ContainerFacts] = {}
        self._holders: dict[DeviceRef, dict[str, int]] = {}  # pod uid -> its containers
        self._gpus: dict[int, GpuFacts] = {}
        self._known: dict[tuple[str, str], dict[str, int]] = {}  # (node, uuid) -> sources
        self._keys: dict[tuple[str, KeyKind, str], str] = {}  # -> uuid, from gpu_devices
        self._numbers: dict[tuple[str, str], dict[str, int]] = {}  # (node, index) -> uuids
        self._changed = False

    # --- what the loader asks ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._pods)

    def has_pod(self, uid: str) -> bool:
        return uid in self._pods

    def pod_facts(self, uid: str) -> PodFacts | None:
        """The pod's facts as its gpu_pods row had them (None: no row read)."""
        pod = self._pods.get(uid)
        return pod.facts if pod is not None and pod.from_row else None

    def live_pods(self) -> list[str]:
        """The uids of the pods indexed as not ended."""
        return [uid for uid, pod in self._pods.items() if not pod.facts.ended]

    def pods_under(self, top_uid: str) -> set[str]:
        return set(self._top_pods.get(top_uid, ()))

    def take_changed(self) -> bool:
        """Whether anything a reader could see changed since the last call."""
        changed, self._changed = self._changed, False
        return changed

    # --- pods and workloads -----------------------------------------------------------------

    def put_pod(self, facts: PodFacts, *, now: datetime.datetime) -> None:
        """Add or update a pod from its gpu_pods row; it ends at `now` if it just ended."""
        pod = self._pods.get(facts.uid)
        if pod is None:
            pod = self._pods[facts.uid] = _Pod(facts=facts, from_row=True, ended_at=None)
        elif pod.from_row and pod.facts == facts:
            return
        else:
            self._unname(pod)
            pod.facts, pod.from_row = facts, True
        self._names.setdefault((facts.namespace, facts.name), set()).add(facts.uid)
        if not facts.ended:
            pod.ended_at = None
        elif pod.ended_at is None:
            pod.ended_at = now
        self._changed = True

    def drop_pod(self, uid: str) -> None:
        pod = self._pods.pop(uid, None)
        if pod is None:
            return
        self._unname(pod)
        self._set_top(pod, "")
        for cid in pod.containers:
            self._hold(self._containers.pop(cid), -1)
        self._changed = True

    def set_top(self, pod_uid: str, top_uid: str) -> None:
        """The pod's top-level workload is `top_uid` ('' none)."""
        pod = self._pods.get(pod_uid)
        if pod is not None and pod.top != top_uid:
            self._set_top(pod, top_uid)
            self._changed = True

    def put_workload(self, workload: Workload) -> None:
        """Keep a workload that is the top of an indexed pod (others are nobody's concern)."""
        if workload.uid in self._top_pods and self._workloads.get(workload.uid) != workload:
            self._workloads[workload.uid] = workload
            self._changed = True

    def _set_top(self, pod: _Pod, top: str) -> None:
        if pod.top:
            under = self._top_pods[pod.top]
            under.discard(pod.facts.uid)
            if not under:
                del self._top_pods[pod.top]
                self._workloads.pop(pod.top, None)
        pod.top = top
        if top:
            self._top_pods.setdefault(top, set()).add(pod.facts.uid)

    def _unname(self, pod: _Pod) -> None:
        key = (pod.facts.namespace, pod.facts.name)
        named = self._names.get(key)
        if named is not None:
            named.discard(pod.facts.uid)
            if not named:
                del self._names[key]

    # --- containers and devices -------------------------------------------------------------

    def put_container(self, facts: ContainerFacts, *, now: datetime.datetime) -> bool:
        """Add or update a container and what it holds; False when its pod is not indexed and
        it is not live (then it is not kept). A live container of a pod gpu_pods lacks makes
        the pod known from the container."""
        old = self._containers.get(facts.container_id)
        if old == facts:
            return True
        if old is not None:
            self._detach(old, now)
        pod = self._pods.get(facts.pod_uid)
        if pod is None:
            if not (facts.live and facts.pod_uid):
                return False
            pod = self._pods[facts.pod_uid] = _Pod(
                facts=_pod_of(facts), from_row=False, ended_at=None
            )
            self._names.setdefault((facts.pod_namespace, facts.pod_name), set()).add(facts.pod_uid)
        self._containers[facts.container_id] = facts
        pod.containers.add(facts.container_id)
        self._hold(facts, 1)
        self._settle(pod, now)
        self._changed = True
        return True

    def _detach(self, facts: ContainerFacts, now: datetime.datetime) -> None:
        del self._containers[facts.container_id]
        self._hold(facts, -1)
        pod = self._pods.get(facts.pod_uid)
        if pod is not None:
            pod.containers.discard(facts.container_id)
            self._settle(pod, now)
        self._changed = True

    def _settle(self, pod: _Pod, now: datetime.datetime) -> None:
        """A pod known from its containers alone lives while one of them does."""
        if pod.from_row:
            return
        live = any(self._containers[cid].live for cid in pod.containers)
        if not live and pod.ended_at is None:
            pod.ended_at = now
        elif live:
            pod.ended_at = None

    def _hold(self, facts: ContainerFacts, by: int) -> None:
        for device in facts.devices:
            ref = (facts.node, device.kind, device.id)
            holders = self._holders.setdefault(ref, {})
            _bump(holders, facts.pod_uid, by)
            if not holders:
                del self._holders[ref]
            if device.kind == GPU:
                self._count(self._known, (facts.node, device.id), "containers", by)
                if device.number >= 0:
                    self._count(self._numbers, (facts.node, str(device.number)), device.id, by)

    @staticmethod
    def _count(
        table: dict[tuple[str, str], dict[str, int]], key: tuple[str, str], item: str, by: int
    ) -> None:
        counts = table.setdefault(key, {})
        _bump(counts, item, by)
        if not counts:
            del table[key]

    def put_gpu(self, facts: GpuFacts) -> None:
        """Add or update a GPU a node reported (gpu_devices row)."""
        old = self._gpus.get(facts.row_id)
        if old == facts:
            return
        if old is not None:
            self.drop_gpu(old.row_id)
        self._gpus[facts.row_id] = facts
        self._count(self._known, (facts.node, facts.uuid), "inventory", 1)
        for key in _gpu_keys(facts):
            self._keys[key] = facts.uuid
        self._changed = True

    def drop_gpu(self, row_id: int) -> None:
        """Forget a GPU that left its node (its containers still name it while they last)."""
        facts = self._gpus.pop(row_id, None)
        if facts is None:
            return
        self._count(self._known, (facts.node, facts.uuid), "inventory", -1)
        for key in _gpu_keys(facts):
            if self._keys.get(key) == facts.uuid:
                del self._keys[key]
        self._changed = True

    # --- bounds -----------------------------------------------------------------------------

    def expire(self, *, now: datetime.datetime, grace: datetime.timedelta) -> list[str]:
        """Drop the pods that ended at least `grace` ago; their uids."""
        gone = [
            uid
            for uid, pod in self._pods.items()
            if pod.ended_at is not None and now - pod.ended_at >= grace
        ]
        for uid in gone:
            self.drop_pod(uid)
        return gone

    def evict_to(self, limit: int) -> list[str]:
        """Drop pods until at most `limit` remain: ended ones first, the longest ended first,
        then the live ones changed longest ago; the uids dropped."""
        excess = len(self._pods) - limit
        if excess <= 0:
            return []
        gone = heapq.nsmallest(excess, self._pods, key=lambda uid: self._pods[uid].preference())
        for uid in gone:
            self.drop_pod(uid)
        return gone

    # --- what the relabeler asks ------------------------------------------------------------

    def attribute(self, identity: SeriesIdentity) -> Attribution | None:
        """The pod a series concerns: the one it names, else the holder of the device it names
        on its node (None: neither is known, or the device is known and nobody holds it)."""
        for uid in identity.pod_uids:
            pod = self._pods.get(uid)
            if pod is not None:
                return self._attribution(pod)
        for name in identity.pod_names:
            named = self._names.get(name)
            if named:
                return self._attribution(self._best(named))
        for node in identity.nodes:
            ref = self._device(node, identity.devices)
            if ref is not None:
                held = self._holders.get(ref)
                return self._attribution(self._best(held)) if held else None
        return None

    def _device(self, node: str, keys: tuple[tuple[KeyKind, str], ...]) -> DeviceRef | None:
        """The first of the keys that names a device known on the node."""
        for kind, value in keys:
            if kind is KeyKind.RDMA:
                if (node, RDMA, value) in self._holders:
                    return node, RDMA, value
                continue
            uuid: str | None = (
                value if kind is KeyKind.UUID else self._keys.get((node, kind, value))
            )
            if uuid is None and kind is KeyKind.INDEX:
                numbered = self._numbers.get((node, value))
                uuid = max(numbered) if numbered else None  # one GPU per index on a node
            if uuid is not None and (node, uuid) in self._known:
                return node, GPU, uuid
        return None

    def _best(self, uids: set[str] | dict[str, int]) -> _Pod:
        return max((self._pods[uid] for uid in uids), key=_Pod.preference)

    def _attribution(self, pod: _Pod) -> Attribution:
        return Attribution(
            pod_uid=pod.facts.uid,
            pod_name=pod.facts.name,
            namespace=pod.facts.namespace,
            top_uid=pod.top,
            workload=self._workloads.get(pod.top),
        )


def _pod_of(container: ContainerFacts) -> PodFacts:
    return PodFacts(
        uid=container.pod_uid,
        name=container.pod_name,
        namespace=container.pod_namespace,
        node=container.node,
        ended=False,
        stamp=container.stamp,
    )


def _gpu_keys(facts: GpuFacts) -> list[tuple[str, KeyKind, str]]:
    keys = ((KeyKind.INDEX, facts.index), (KeyKind.PCI, facts.pci), (KeyKind.SERIAL, facts.serial))
    return [(facts.node, kind, value) for kind, value in keys if value]
