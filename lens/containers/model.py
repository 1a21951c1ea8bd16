"""What the containers domain produces: containers with their pod and devices, and their events.

tracking.py makes them from containerd's (or Docker's) records and events; wire.py carries them
to `lens jobs`, recording.py writes them to the store, and the agent's /v1/pods shows them.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Literal

DeviceType = Literal["gpu", "ib"]


class Source(enum.Enum):
    """Where a container was seen; the values are the original's node_containers.source."""

    CONTAINERD = "k8s"
    DOCKER = "docker"


class EventType(enum.Enum):
    CREATED = "created"
    STARTED = "started"
    EXITED = "exited"
    OOM_KILLED = "oom_killed"
    DELETED = "deleted"
    # Found by a listing (start, reconnect, reconciliation): updates the row, adds no event row.
    OBSERVED = "observed"


# node_containers.status after each event, the original's strings.
STATUS_AFTER = {
    EventType.CREATED: "Created",
    EventType.STARTED: "Running",
    EventType.EXITED: "Exit",
    EventType.OOM_KILLED: "OOMKilled",
    EventType.DELETED: "Deleted",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Pod:
    uid: str
    name: str
    namespace: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Device:
    """A GPU or RDMA device a container was given."""

    type: DeviceType
    name: str  # GPU model, or RDMA device name (mlx5_0)
    number: int  # the GPU index as lens numbers GPUs, or the RDMA device's index
    uuid: str  # GPU serial / UUID, or the RDMA node GUID
    path: str = ""  # the device node as the container sees it


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    id: str
    name: str  # the Kubernetes container name; the id when there is none
    pod: Pod | None
    devices: tuple[Device, ...]
    image: str = ""
    created_at: float  # epoch seconds
    status: str  # one of STATUS_AFTER's values
    exit_code: int | None = None
    exited_at: float | None = None

    @property
    def gpus(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.type == "gpu")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainerEvent:
    type: EventType
    source: Source
    container: Container  # as it was at the event (still complete after it was deleted)
    time: float  # when it happened, by the runtime's clock (epoch seconds)
    exit_code: int | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Inventory:
    """Every live container of one source at `time`; ones missing here have ended."""

    source: Source
    time: float
    container_ids: tuple[str, ...]


Record = ContainerEvent | Inventory
