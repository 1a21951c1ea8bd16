"""Which device sets are already stored per container, so a batch writes a container's device
rows once instead of with every event (recording.py)."""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Sequence

from lens.containers.model import ContainerEvent, Device


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceChanges:
    """The events whose device rows a batch writes, and which of their containers held others."""

    to_store: tuple[ContainerEvent, ...]
    replaced: tuple[ContainerEvent, ...]


class StoredDevices:
    """The device sets known stored per container, most recent first, up to `capacity`.

    Every event carries its container's devices, which rarely change (the kubelet's allocation
    read after the spec's); writing them once per container instead of once per event is most
    of a batch's rows saved. Forgetting a container only costs a redundant insert-if-absent.
    """

    def __init__(self, capacity: int = 100_000) -> None:
        self._capacity = capacity
        self._sets: collections.OrderedDict[str, tuple[Device, ...]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def changes(self, events: Sequence[ContainerEvent]) -> DeviceChanges:
        """Per container, its last event in `events` when its devices are not known stored; and
        those of them known stored with other devices."""
        last: dict[str, ContainerEvent] = {}
        for event in events:
            if event.container.devices:
                last[event.container.id] = event
        to_store: list[ContainerEvent] = []
        replaced: list[ContainerEvent] = []
        with self._lock:
            for cid, event in last.items():
                known = self._sets.get(cid)
                if known != event.container.devices:
                    to_store.append(event)
                    if known is not None:
                        replaced.append(event)
        return DeviceChanges(to_store=tuple(to_store), replaced=tuple(replaced))

    def remember(self, events: Sequence[ContainerEvent]) -> None:
        with self._lock:
            for event in events:
                self._sets[event.container.id] = event.container.devices
                self._sets.move_to_end(event.container.id)
            while len(self._sets) > self._capacity:
                self._sets.popitem(last=False)
