"""A cluster scenario as data: node groups, workloads with their timing, node losses; presets.

player.py turns a Scenario into objects in the API emulator (and host trees and kubelets for
the nodes that need them) and replays its timeline, faster than real time if asked.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Literal

WorkloadKind = Literal["Deployment", "StatefulSet", "Job", "CronJob", "PyTorchJob", "Pod"]

# The generated presets' batch jobs arrive and last whole multiples of this: every pod comes and
# goes on a 15 s grid, so a replay reading GPUs every 15 s sees each change when it happens.
TIME_STEP_SECONDS = 15.0
# The label a scenario's namespaces and top-level workloads name their team by: Lens's
# jobs.team_label by default, so GPU-hours per team show the scenario's teams.
TEAM_LABEL = "team"
# The medium and large presets' teams; namespace team-<i> belongs to the (i mod 5)th.
TEAMS = ("llm", "vision", "speech", "recsys", "platform")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroup:
    count: int
    prefix: str = "gpu-node"
    model: str = "MI300X"
    gpus: int = 8
    rdma: int = 8
    compute_partition: str = "SPX"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """One workload; times are seconds after the scenario starts."""

    kind: WorkloadKind
    name: str
    namespace: str = "default"
    replicas: int = 1
    gpus_per_pod: int = 8
    start: float = 0.0
    duration: float | None = None  # None: runs until the scenario ends (or forever)
    fails: bool = False
    schedule_every: float = 600.0  # CronJob only: seconds between runs

    def __post_init__(self) -> None:
        if self.replicas < 1 or self.gpus_per_pod < 0:
            raise ValueError(f"{self.name}: replicas >= 1 and gpus_per_pod >= 0")
        if self.kind in ("Job", "CronJob") and self.duration is None:
            raise ValueError(f"{self.name}: a {self.kind} needs a duration")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeLoss:
    node: str
    at: float
    eviction_delay: float = 300.0  # the node controller's default before pods are evicted


GpuFaultKind = Literal["uncorrectable_error", "thermal_throttle", "pending_pages"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuFault:
    """A fault of one GPU from `at` seconds into the scenario on (lens/sim/hosts/state.py
    injects it): an uncorrectable memory error, a thermal throttle that lasts, or a bad VRAM
    page waiting for a reset."""

    node: str
    gpu: int
    at: float
    kind: GpuFaultKind


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    name: str
    nodes: tuple[NodeGroup, ...]
    workloads: tuple[Workload, ...] = ()
    node_losses: tuple[NodeLoss, ...] = ()
    gpu_faults: tuple[GpuFault, ...] = ()
    seed: int = 0
    # (namespace, team): the team label its namespace and its top-level workloads carry; a
    # namespace not listed has none.
    teams: tuple[tuple[str, str], ...] = ()

    def team_of(self, namespace: str) -> str:
        """The team of `namespace`'s workloads ('' for none)."""
        return dict(self.teams).get(namespace, "")

    @property
    def node_names(self) -> list[str]:
        return [f"{g.prefix}-{i:04d}" for g in self.nodes for i in range(g.count)]

    @property
    def gpu_count(self) -> int:
        return sum(g.count * g.gpus for g in self.nodes)


def small() -> Scenario:
    """2 nodes x 8 MI300X: one of each workload kind, a failure and completions."""
    return Scenario(
        name="small",
        nodes=(NodeGroup(count=2),),
        workloads=(
            Workload(
                kind="PyTorchJob", name="llama-pretrain", namespace="ml", replicas=2, gpus_per_pod=4
            ),
            Workload(
                kind="Deployment",
                name="vllm-serve",
                namespace="serving",
                replicas=1,
                gpus_per_pod=2,
            ),
            Workload(
                kind="StatefulSet", name="rayworker", namespace="ml", replicas=2, gpus_per_pod=1
            ),
            Workload(
                kind="Job", name="eval-mmlu", namespace="ml", gpus_per_pod=1, start=30, duration=600
            ),
            Workload(
                kind="Job",
                name="bad-config",
                namespace="ml",
                gpus_per_pod=1,
                start=60,
                duration=90,
                fails=True,
            ),
            Workload(
                kind="CronJob",
                name="nightly-bench",
                namespace="ml",
                gpus_per_pod=1,
                start=0,
                duration=120,
                schedule_every=900,
            ),
            Workload(kind="Pod", name="debug-shell", namespace="default", gpus_per_pod=0),
        ),
        teams=(("ml", "research"), ("serving", "inference")),
    )


def _training(rng: random.Random, gpus: int, pods: int) -> list[Workload]:
    """PyTorchJobs of 8-GPU pods using up to `gpus` GPUs and `pods` pods."""
    workloads: list[Workload] = []
    while gpus >= 16 and pods > 0:
        replicas = min(rng.choice((2, 4, 8)), gpus // 8, pods)
        index = len(workloads) + 1
        workloads.append(
            Workload(
                kind="PyTorchJob",
                name=f"train-{index}",
                namespace=f"team-{index % 20}",
                replicas=replicas,
                gpus_per_pod=8,
            )
        )
        gpus -= replicas * 8
        pods -= replicas
    return workloads


def _small_pods(rng: random.Random, gpus: int, pods: int, first: int) -> list[Workload]:
    """Services, stateful sets and batch jobs of one-GPU pods, batch arriving over an hour."""
    workloads: list[Workload] = []
    index = first
    while pods > 0 and gpus > 0:
        index += 1
        namespace = f"team-{index % 20}"
        roll = rng.random()
        if roll < 0.45:
            replicas = min(pods, gpus, rng.choice((1, 2, 4)))
            workloads.append(
                Workload(
                    kind="Deployment",
                    name=f"serve-{index}",
                    namespace=namespace,
                    replicas=replicas,
                    gpus_per_pod=1,
                )
            )
        elif roll < 0.6:
            replicas = min(pods, gpus, 2)
            workloads.append(
                Workload(
                    kind="StatefulSet",
                    name=f"kv-{index}",
                    namespace=namespace,
                    replicas=replicas,
                    gpus_per_pod=1,
                )
            )
        else:
            replicas = 1
            start, duration = _on_grid(rng.uniform(0, 3600)), _on_grid(rng.uniform(300, 7200))
            workloads.append(
                Workload(
                    kind="Job",
                    name=f"batch-{index}",
                    namespace=namespace,
                    gpus_per_pod=1,
                    start=start,
                    duration=duration,
                    fails=rng.random() < 0.05,
                )
            )
        pods -= replicas
        gpus -= replicas
    return workloads


def _on_grid(seconds: float) -> float:
    return TIME_STEP_SECONDS * round(seconds / TIME_STEP_SECONDS)


def mixed(name: str, nodes: int, pods: int, seed: int) -> Scenario:
    """A busy cluster: a third of the GPUs in 8-GPU training pods, the rest in small pods,
    so that `pods` pods fit the cluster with a little room to spare."""
    rng = random.Random(seed)
    usable = int(nodes * 8 * 0.95)
    training = _training(rng, usable // 3, pods)
    used_pods = sum(w.replicas for w in training)
    used_gpus = sum(w.replicas * w.gpus_per_pod for w in training)
    rest = _small_pods(rng, usable - used_gpus, pods - used_pods, first=len(training))
    workloads = tuple(training + rest)
    namespaces = sorted({w.namespace for w in workloads}, key=lambda n: int(n.split("-")[1]))
    teams = tuple((n, TEAMS[int(n.split("-")[1]) % len(TEAMS)]) for n in namespaces)
    return Scenario(
        name=name, nodes=(NodeGroup(count=nodes),), workloads=workloads, seed=seed, teams=teams
    )


# The medium preset's faulty GPUs, for the dashboard to show: one whose memory fails a minute
# in, one that runs hot from the start (degraded once it has throttled for a minute).
MEDIUM_FAULTS = (
    GpuFault(node="gpu-node-0007", gpu=2, at=60.0, kind="uncorrectable_error"),
    GpuFault(node="gpu-node-0012", gpu=5, at=0.0, kind="thermal_throttle"),
)


def medium() -> Scenario:
    """100 nodes x 8 GPUs with about 500 GPU pods, one GPU failing and one throttling."""
    return dataclasses.replace(mixed("medium", 100, 500, seed=100), gpu_faults=MEDIUM_FAULTS)


def large() -> Scenario:
    """1,000 nodes x 8 GPUs with 5,000 GPU pods, for benchmarks."""
    return mixed("large", 1000, 5000, seed=1000)


PRESETS = {"small": small, "medium": medium, "large": large}


def preset(name: str) -> Scenario:
    if name not in PRESETS:
        raise ValueError(f"unknown scenario {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name]()
