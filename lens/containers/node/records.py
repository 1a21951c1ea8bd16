"""What a container runtime reports, as the tracker reads it: containers, tasks and events.

containerd.py reads them from containerd's API and docker.py from Docker Engine's; event topics
are containerd's (`/tasks/start`, ...), to which Docker's actions are mapped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainerRecord:
    id: str
    labels: Mapping[str, str]
    image: str
    spec: bytes  # the OCI runtime spec as JSON
    created_at: float
    name: str = ""  # the runtime's own name (Docker's), if it has one


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    container_id: str
    status: str  # created, running, stopped, paused or unknown
    pid: int
    exit_status: int | None
    exited_at: float | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeEvent:
    """One containerd event the tracker acts on."""

    topic: str
    container_id: str
    time: float  # the envelope's timestamp
    exec_id: str = ""  # /tasks/exit: the process that exited ("" or the id: the container's own)
    pid: int | None = None
    exit_status: int | None = None
    exited_at: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeStatus:
    """What the runtime still knows of a container whose task is gone: containerd's CRI plugin
    keeps every container's status, exit code included, until the container is removed."""

    state: str  # created, running, exited or unknown
    exit_code: int | None  # set when exited
    finished_at: float | None  # set when exited
