"""What a scenario's training jobs print, for `lens demo` to ship as a log collector would: each
PyTorchJob pod running Megatron-LM (the layout of ../shared/formats/training-logs.md) — its first
rank's `training ...` banner when it starts, and the last rank's iteration line every
ITERATION_SECONDS while it runs, with a loss that falls as the job trains and a throughput that
follows its GPUs' load. A pod started again after one of its job ended resumes from the job's
last checkpoint (every CHECKPOINT_EVERY iterations), as a restarted training does.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import random

from lens.sim.scenario.truth import Hold, Truth

TRAINING_KINDS = ("PyTorchJob",)
STARTUP_SECONDS = 30.0  # from a pod's start to its banner; its first iteration a step later
ITERATION_SECONDS = 10.0
CHECKPOINT_EVERY = 50
PEAK_TFLOPS = 1307.4  # MI300X dense BF16, the scenario's GPUs
TARGET_ITERATIONS = 100_000


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LogLine:
    """One line a container printed, with its pod's Kubernetes metadata."""

    pod_uid: str
    pod_name: str
    namespace: str
    node: str
    at: float  # Unix seconds
    line: str


@dataclasses.dataclass(slots=True)
class _Job:
    """A job's progress: the iteration each of its pods started from."""

    checkpoint: int = 0
    starts: dict[str, int] = dataclasses.field(default_factory=dict)


class TrainingLogs:
    """The lines printed by `truth`'s training pods; `due(now)` hands each once, in time order."""

    def __init__(self, truth: Truth) -> None:
        self._truth = truth
        self._through: float | None = None
        self._jobs: dict[str, _Job] = {}

    def due(self, now: float) -> list[LogLine]:
        """The lines printed after the previous call's `now` (the first call: none before
        `now` minus one iteration) and up to `now`."""
        since = now - ITERATION_SECONDS if self._through is None else self._through
        self._through = now
        lines: list[LogLine] = []
        for hold in self._truth.holds:
            if hold.workload.kind in TRAINING_KINDS and hold.since <= now:
                lines.extend(self._printed(hold, since, now))
        lines.sort(key=lambda line: line.at)
        return lines

    def _printed(self, hold: Hold, since: float, now: float) -> list[LogLine]:
        job = self._jobs.setdefault(hold.workload.uid, _Job())
        first = job.starts.setdefault(hold.pod_uid, job.checkpoint)
        ends = hold.running_until if hold.running_until is not None else math.inf
        lines = []
        banner = hold.since + STARTUP_SECONDS
        if since < banner <= now and banner < ends and self._is_rank(hold, last=False):
            lines.append(self._line(hold, banner, "training ..."))
        if self._is_rank(hold, last=True):
            step = max(1, math.floor((since - banner) / ITERATION_SECONDS) + 1)
            while (at := banner + step * ITERATION_SECONDS) <= min(now, ends):
                if at > since:
                    iteration = first + step
                    lines.append(self._line(hold, at, self._iteration(hold, iteration, at)))
                    job.checkpoint = max(
                        job.checkpoint, iteration // CHECKPOINT_EVERY * CHECKPOINT_EVERY
                    )
                step += 1
        return lines

    def _is_rank(self, hold: Hold, *, last: bool) -> bool:
        """Whether `hold` is its job's first (or last) pod among those running with it."""
        mates = sorted(
            h.pod_name
            for h in self._truth.holds
            if (h.workload.uid == hold.workload.uid and h.running_until is None) or h is hold
        )
        return hold.pod_name == (mates[-1] if last else mates[0])

    def _line(self, hold: Hold, at: float, text: str) -> LogLine:
        return LogLine(
            pod_uid=hold.pod_uid,
            pod_name=hold.pod_name,
            namespace=hold.namespace,
            node=hold.node,
            at=at,
            line=text,
        )

    def _iteration(self, hold: Hold, iteration: int, at: float) -> str:
        rng = random.Random(f"{hold.pod_uid}/{iteration}")
        loads = [self._truth.load(hold.node, gpu, at) for gpu in hold.gpus]
        load = sum(loads) / len(loads) if loads else 0.0
        tflops = PEAK_TFLOPS * 0.45 * load / 100 * rng.uniform(0.97, 1.03)
        elapsed_ms = ITERATION_SECONDS * 1000 * rng.uniform(0.98, 1.02)
        loss = 2.0 + 9.0 * math.exp(-iteration / 800) + rng.uniform(-0.05, 0.05)
        rate = 3e-4 * min(1.0, iteration / 200)
        stamp = datetime.datetime.fromtimestamp(at, datetime.UTC)
        return (
            f" [{stamp.strftime('%Y-%m-%d %H:%M:%S.%f')}]"
            f" iteration {iteration:8d}/{TARGET_ITERATIONS:8d} |"
            f" consumed samples: {iteration * 512:12d} |"
            f" elapsed time per iteration (ms): {elapsed_ms:.1f} |"
            f" throughput per GPU (TFLOP/s/GPU): {tflops:.1f} |"
            f" learning rate: {rate:.6E} | global batch size:   512 |"
            f" lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {rng.uniform(0.8, 1.6):.3f} |"
            " number of skipped iterations:   0 | number of nan iterations:   0 |"
        )
