"""`lens tune` with tune.node_name against the API emulator, recorded: the daemon reads its Node's
labels, which select a profile it then applies on a temporary host root."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lens.roles.tune import main as tune_main
from lens.runtime.config import Config, HostConfig, TuneConfig
from tests.deploy.roleruns import (
    LOOPBACK,
    Recorded,
    Running,
    emulator,
    kubeconfig_of,
    process_of,
    wait_for,
)

NODE = "gpu-node-1"
POLICY = (
    "profiles: [{match: {lens.dev/gpu-node: 'true'},"
    " sysctls: {kernel.numa_balancing: {exactly: 0}}}]\n"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TuneRun:
    recorded: Recorded
    numa_balancing: str  # after the run: 0 once the Node's label selected the profile


def run(directory: Path) -> TuneRun:
    host = directory / "host"
    for key, value in (("vm/max_map_count", "65530"), ("kernel/numa_balancing", "1")):
        (host / "proc/sys" / key).parent.mkdir(parents=True, exist_ok=True)
        (host / "proc/sys" / key).write_text(value + "\n")
    (host / "etc").mkdir()
    policy = directory / "policy.yaml"
    policy.write_text(POLICY)
    with emulator() as kube:
        labels = {"lens.dev/gpu-node": "true"}
        kube.create(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": labels}}
        )
        config = Config(
            server=LOOPBACK,
            host=HostConfig(root=str(host)),
            kube=kubeconfig_of(kube, directory, "home"),
            tune=TuneConfig(policy_file=str(policy), node_name=NODE),
        )
        kube.clear_recorded()
        built = tune_main.build(config, process_of("tune"))
        running = Running(built.process)
        numa = host / "proc/sys/kernel/numa_balancing"
        try:
            wait_for("the profile applied", lambda: numa.read_text() == "0\n")
        finally:
            running.stop()
        return TuneRun(recorded=Recorded(home=kube.recorded()), numa_balancing=numa.read_text())
