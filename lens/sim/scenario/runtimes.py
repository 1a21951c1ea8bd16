"""The container runtime of a played scenario's node: a Docker stand-in (lens/sim/docker.py) that
runs a container for each pod bound to the node and ends it when the pod finishes, at the
scenario's times, with the kubelet's CRI labels — what a node agent following Docker sees.

`Announcer` says which of the truth's holds began and ended since it was last asked, so a
replay or `lens demo` tells each node's runtime as the scenario goes on.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from pathlib import Path

from lens.sim.containerd import pod_labels
from lens.sim.docker import ScriptedDocker, event_line, inspect_body
from lens.sim.scenario.truth import DELETED, FAILED, Hold, Truth

CONTAINER = "main"  # the scenario's pods have one container


def container_id(hold: Hold) -> str:
    return hashlib.sha256(f"{hold.pod_uid}/{CONTAINER}/0".encode()).hexdigest()


def rfc3339(at: float) -> str:
    moment = datetime.datetime.fromtimestamp(at, datetime.UTC)
    return moment.isoformat().replace("+00:00", "Z")


class ScriptedRuntime:
    """The Docker stand-in of one node, told what the pods on it do.

    `renders`: character devices standing in for the node's render nodes, by GPU index, listed
    as each container's devices; none, and a container lists no device (the kubelet's
    pod-resources then tells the agent which GPUs it holds)."""

    def __init__(self, socket: Path, renders: Sequence[Path] = ()) -> None:
        self.docker = ScriptedDocker(socket)
        self._renders = list(renders)
        # Container id -> the status its agent must see: only containers holding GPUs, the only
        # ones an agent follows (containers/node/tracking.py).
        self.expected: dict[str, str] = {}
        self.docker.start()

    def started(self, hold: Hold) -> None:
        cid = container_id(hold)
        labels = pod_labels(
            pod=hold.pod_name, namespace=hold.namespace, uid=hold.pod_uid, container=CONTAINER
        )
        devices = [str(self._renders[i]) for i in hold.gpus] if self._renders else []
        self.docker.bodies[cid] = inspect_body(
            cid,
            name=f"k8s_{CONTAINER}_{hold.pod_name}_{hold.namespace}_{hold.pod_uid}_0",
            labels=labels,
            devices=devices,
            created=rfc3339(hold.since),
        )
        for action in ("create", "start"):
            self.docker.send(event_line(action, cid, time_nano=round(hold.since * 1e9)))
        if hold.gpus:
            self.expected[cid] = "Running"

    def ended(self, hold: Hold) -> None:
        if hold.until is None:
            raise ValueError(f"{hold.pod_name} has not ended")
        cid, code = container_id(hold), 1 if hold.ended_by == FAILED else 0
        body = self.docker.bodies[cid]
        if isinstance(body, dict):
            body["State"] = {
                "Status": "exited",
                "Pid": 0,
                "ExitCode": code,
                "FinishedAt": rfc3339(hold.until),
            }
        at = round(hold.until * 1e9)
        self.docker.send(event_line("die", cid, time_nano=at, exitCode=str(code)))
        followed = cid in self.expected
        if followed:
            self.expected[cid] = "Exit"
        if hold.ended_by == DELETED:
            del self.docker.bodies[cid]
            self.docker.send(event_line("destroy", cid, time_nano=at))
            if followed:
                self.expected[cid] = "Deleted"

    def stop(self) -> None:
        self.docker.stop()


class Announcer:
    """The truth's holds that began, and those that ended by a time, each told once."""

    def __init__(self, truth: Truth) -> None:
        self._truth = truth
        self._told = 0  # holds[:_told] were told as begun
        self._open: list[Hold] = []

    def due(self, now: float) -> tuple[list[Hold], list[Hold]]:
        """(holds begun, holds ended by `now`) since the last call, in the truth's order."""
        holds = self._truth.holds
        begun = list(holds[self._told :])
        self._told = len(holds)
        self._open.extend(begun)
        ended = [h for h in self._open if h.until is not None and h.until <= now]
        self._open = [h for h in self._open if h.until is None or h.until > now]
        return begun, ended
