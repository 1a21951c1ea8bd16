"""The benchmark's cluster, in its own process: the API emulator loaded with a scenario, and a
driver that changes it on command (read from stdin, one JSON line answered per command).

Commands:
- `{"churn": N}`: flip a condition on GPU pods N times, as fast as the emulator takes it.
- `{"rate": R, "seconds": S}`: the same at R changes per second; each change's
  lastTransitionTime is the wall-clock moment it was made (microseconds), so the controller side
  can tell event-to-row latency from the rows' own times.
- `{"finalized": N}`: how many Jobs carry the Lens finalizer (up to N checked).
- `{"delete_jobs": N, "rate": R}`: request deletion of N Jobs at R per second; answers each one's
  seconds from the request until the object was gone (finalizer released).
"""

from __future__ import annotations

import datetime
import itertools
import json
import sys
import threading
import time
from typing import Any

from lens.runtime.clock import FakeClock
from lens.sim.kube.selectors import parse_field_selector, parse_label_selector
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer

FINALIZER = "lens.dev/gpu-workload"
CONDITION = "LensBench"


def _stamp(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Driver:
    def __init__(self, kube: KubeApiServer) -> None:
        self.kube = kube
        self.pods = kube.resource("v1", "Pod")
        self.jobs = kube.resource("batch/v1", "Job")
        self._gpu_pods = [
            (p["metadata"]["namespace"], p["metadata"]["name"])
            for p in self._all(self.pods)
            if p.get("status", {}).get("phase") == "Running"
        ]
        self._flip = itertools.count()

    @property
    def running_pods(self) -> int:
        return len(self._gpu_pods)

    def _all(self, rtype: Any) -> list[dict[str, Any]]:
        items, _ = self.kube.store.select(
            rtype, None, parse_label_selector(None), parse_field_selector(None, rtype.kind)
        )
        return list(items)

    def change_one(self) -> None:
        flip = next(self._flip)
        namespace, name = self._gpu_pods[flip % len(self._gpu_pods)]
        current = self.kube.store.get(self.pods, namespace, name)
        status = dict(current.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != CONDITION]
        conditions.append(
            {
                "type": CONDITION,
                "status": "True" if flip % 2 == 0 else "False",
                "lastTransitionTime": _stamp(time.time()),
            }
        )
        status["conditions"] = conditions
        self.kube.store.put_status(self.pods, namespace, name, status)

    def churn(self, count: int) -> dict[str, float]:
        began = time.time()
        for _ in range(count):
            self.change_one()
        return {"began": began, "ended": time.time()}

    def rate(self, per_second: float, seconds: float) -> dict[str, float]:
        began = time.monotonic()
        for index in range(int(per_second * seconds)):
            due = began + index / per_second
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.change_one()
        return {"changes": int(per_second * seconds)}

    def finalized(self, limit: int) -> dict[str, int]:
        held = [
            j for j in self._all(self.jobs) if FINALIZER in (j["metadata"].get("finalizers") or [])
        ]
        return {"finalized": min(len(held), limit)}

    def delete_jobs(self, count: int, per_second: float) -> dict[str, list[float]]:
        held = [
            (j["metadata"]["namespace"], j["metadata"]["name"])
            for j in self._all(self.jobs)
            if FINALIZER in (j["metadata"].get("finalizers") or [])
        ][:count]
        waits: list[float] = []
        threads = []
        for namespace, name in held:
            requested = time.monotonic()
            self.kube.store.delete(self.jobs, namespace, name, propagation="Background")
            watcher = threading.Thread(
                target=self._until_gone, args=(namespace, name, requested, waits)
            )
            watcher.start()
            threads.append(watcher)
            time.sleep(1 / per_second)
        for watcher in threads:
            watcher.join(60)
        return {"release_seconds": waits}

    def _until_gone(self, namespace: str, name: str, requested: float, waits: list[float]) -> None:
        deadline = requested + 60
        while time.monotonic() < deadline:
            try:
                self.kube.store.get(self.jobs, namespace, name)
            except Exception:  # gone: the finalizer was released
                waits.append(time.monotonic() - requested)
                return
            time.sleep(0.005)


def main() -> None:
    pods = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    nodes = max(1, pods // 5)
    scenario = spec.mixed("bench", nodes, pods, seed=7)
    clock = FakeClock(start_time=time.time() - 3600)  # the scenario's hour ends about now
    kube = KubeApiServer(clock=clock, bookmark_interval=1.0, history_size=200_000).start()
    ScenarioPlayer(scenario, kube, clock=clock).load().run_until(3600)
    driver = Driver(kube)
    print(json.dumps({"url": kube.url, "gpu_pods": driver.running_pods}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if "churn" in command:
            answer: dict[str, Any] = driver.churn(int(command["churn"]))
        elif "delete_jobs" in command:
            answer = driver.delete_jobs(int(command["delete_jobs"]), float(command["rate"]))
        elif "finalized" in command:
            answer = driver.finalized(int(command["finalized"]))
        else:
            answer = driver.rate(float(command["rate"]), float(command["seconds"]))
        print(json.dumps(answer), flush=True)
    kube.stop()


if __name__ == "__main__":
    main()
