"""Training-log parsing speed: a mixed corpus of container log lines as `lens jobs` receives
them from the pods of training jobs, and `measure`, which times
lens.telemetry.trainlogs.parsing.parse_line over it in lines/s per core (CPU time of this
process, time.process_time), overall and per kind of line. Issue 21 budgets ≥ 200,000 lines/s.

The lines follow ../shared/formats/training-logs.md and the golden lines of
tests/telemetry/trainlogs; numbers vary from line to line as a run's do.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Callable, Sequence

from lens.telemetry.trainlogs import parsing

# What the intake sees of one job in steady state per log interval (a block), and how many
# blocks each kind of job adds (BLOCK_WEIGHTS):
# - Megatron-LM and AMD Primus (most jobs on an AMD cluster: 30 and 40): the last rank's
#   iteration line per --log-interval; a third of the runs raise --timing-log-level and print
#   Megatron's timers block after it (a header and 8 timers); and about one line from the
#   job's pods amortized over the interval: Python and c10d warnings repeated by ranks, the
#   NCCL/RCCL chatter of (re)starts, checkpoint saves, a failed rank's traceback, memory
#   reports, validation and datetime lines.
# - TorchTitan (10): its run_train.sh runs torchrun --role rank --tee 3 --local-ranks-filter 0,
#   so one `[rank0]:`-prefixed step line per log_freq and pod, and one other line.
# - DeepSpeed (10): the engine's step line and the throughput timer's per steps_per_print,
#   the pipeline engine's on a third of the runs, the wall-clock breakdown
#   (`time (ms) | fwd_microstep: ... | step_microstep: ...`), one other line.
# - Hugging Face Trainer (10): two lines of tqdm redraws (carriage returns), a loss dict.
# That makes a quarter of the lines iteration lines (`LoadFigures.iteration_lines`), the
# expensive ones, nearly half timers and the rest other lines: a heavy share of iteration
# lines, as a long run's startup chatter and failed runs' output add cheap lines to what a
# cluster really sends.
BLOCK_WEIGHTS = {"megatron": 30, "primus": 40, "torchtitan": 10, "deepspeed": 10, "hf": 10}

Line = tuple[str, str]  # (kind, text)

_TIMERS = (
    "forward-backward",
    "forward-compute",
    "backward-compute",
    "batch-generator",
    "layernorm-grads-all-reduce",
    "embedding-grads-all-reduce",
    "all-grads-sync",
    "optimizer",
)
_NCCL = "{node}:{pid}:{tid} [{gpu}] NCCL INFO "
_NOISE = (
    ("nccl", _NCCL + "Channel {c:02d}/32 : {r}[{gpu}] -> {s}[{g2}] via P2P/IPC"),
    ("nccl", _NCCL + "Connected all rings"),
    (
        "nccl",
        _NCCL + "comm 0x55d4c8a0{c:02d} rank {r} nranks 64 cudaDev {gpu} busId 1b000"
        " commId 0x1f2e3d4c5b6a7988 - Init COMPLETE",
    ),
    ("nccl", "RCCL version 2.20.5-HEAD:1d35b5c+hip6.2 HIP version 6.2.41133"),
    (
        "warning",
        "[rank{r}]:[W822 12:00:01.482113000 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0"
        " Rank {r}] using GPU {gpu} to perform barrier as devices used by this process are"
        " currently unknown.",
    ),
    (
        "warning",
        "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:295: FutureWarning:"
        " `torch.cpu.amp.autocast(args...)` is deprecated.",
    ),
    ("warning", "  warnings.warn("),
    ("warning", "W0822 12:00:01.482000 140 torch/distributed/run.py:793] *******************"),
    (
        "checkpoint",
        "saving checkpoint at iteration    {it:5d} to /ckpt/llama3 in torch_dist format",
    ),
    (
        "checkpoint",
        "  successfully saved checkpoint from iteration    {it:5d} to /ckpt/llama3"
        " [ t 1/8, p 1/1 ]",
    ),
    ("traceback", "[rank{r}]: Traceback (most recent call last):"),
    (
        "traceback",
        '[rank{r}]:   File "/workspace/Megatron-LM/pretrain_gpt.py", line 290, in <module>',
    ),
    (
        "traceback",
        "[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970,"
        " unhandled system error, NCCL version 2.21.5",
    ),
    (
        "framework-info",
        "[Rank {r}] (after {it} iterations) memory (MB) | allocated: 61234.56 | max allocated:"
        " 88012.34 | reserved: 90112.00 | max reserved: 90112.00",
    ),
    (
        "framework-info",
        " validation loss at iteration {it} on validation set | lm loss value: 3.412500E+00 |"
        " lm loss PPL: 3.034417E+01 | ",
    ),
    ("framework-info", "[before the start of training step] datetime: 2026-08-22 12:00:01 "),
    (
        "framework-info",
        "[titan] 2026-08-22 12:00:01,007 - root - INFO - [GC] Performing periodical GC"
        " collection 0.05 seconds",
    ),
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class KindFigures:
    """parse_line over the corpus's lines of one kind alone."""

    kind: str
    lines: int
    lines_per_second: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LoadFigures:
    """parse_line over the whole corpus in its order, and per kind of line."""

    lines: int
    iteration_lines: int  # lines that gave figures
    lines_per_second: float  # per core: lines over CPU seconds of the best repeat
    kinds: tuple[KindFigures, ...]

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


class _Job:
    """One job's numbers, which advance as its iterations do."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.iteration = rng.randrange(1, 5000)
        self.second = rng.randrange(0, 40_000)
        self.rank = rng.choice((7, 15, 63, 511))

    def step(self) -> None:
        self.iteration += 1
        self.second += self.rng.randrange(1, 9)

    def stamp(self, sep: str = "-", time_sep: str = " ") -> str:
        hours, rest = divmod(self.second, 3600)
        return f"2026{sep}08{sep}22{time_sep}{hours % 24:02d}:{rest // 60:02d}:{rest % 60:02d}"

    def noise(self) -> Line:
        r = self.rng
        kind, template = r.choice(_NOISE)
        return kind, template.format(
            node=f"gpu-node-{r.randrange(64)}",
            pid=r.randrange(100, 9000),
            tid=r.randrange(100, 9000),
            gpu=r.randrange(8),
            g2=r.randrange(8),
            c=r.randrange(32),
            r=r.randrange(64),
            s=r.randrange(64),
            it=self.iteration,
        )


def _megatron_fields(job: _Job, layout: str) -> list[str]:
    r = job.rng
    ms, tflops = r.uniform(800, 6000), r.uniform(200, 520)
    fields = [
        f"consumed samples: {job.iteration * 64:12d}",
        f"elapsed time per iteration (ms): {ms:.1f}",
        f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f}",
    ]
    if layout == "core_0_19":
        fields += [f"energy per GPU (J/iter/GPU): {ms * 0.62:.1f}", "power per GPU (W/GPU): 624.9"]
    lr = r.uniform(1e-6, 3e-4)
    fields.append(f"learning rate: {lr:.3E}" if layout == "v2" else f"learning rate: {lr:.6E}")
    fields += ["global batch size:    64", f"lm loss: {r.uniform(1.5, 9):.6E}"]
    if layout == "core_0_9":
        fields.append(f"load_balancing_loss: {r.uniform(1, 1.1):.6E}")
    fields += ["loss scale: 1.0", f"grad norm: {r.uniform(0.2, 4):.3f}"]
    if layout == "core_0_9":
        fields.append("num zeros: 0.0")
    return [*fields, "number of skipped iterations:   0", "number of nan iterations:   0"]


def megatron_line(job: _Job) -> str:
    layout = job.rng.choice(("core_0_19", "core_0_9", "v2"))
    head = f" iteration {job.iteration:8d}/{500_000:8d} |"
    if layout == "core_0_19":
        head = f" [{job.stamp()}.{job.rng.randrange(10**6):06d}]" + head
    elif layout == "core_0_9":
        head = f" [{job.stamp()}]" + head
    line = head + "".join(f" {field} |" for field in _megatron_fields(job, layout))
    prefix = job.rng.choice(("", "", f"[default{job.rank % 8}]:", f"{job.rank}: "))
    return prefix + line


def primus_line(job: _Job) -> str:
    r = job.rng
    ms, tflops, tokens = r.uniform(800, 6000), r.uniform(200, 520), r.uniform(5000, 14000)
    used = r.uniform(60, 180)
    free, ratio = 191.98 - used, used / 191.98 * 100
    memory = (
        f"hip mem usage/free/total/usage_ratio: {used:.2f}GB/{free:.2f}GB/191.98GB/{ratio:.2f}%"
    )
    layout = r.choice(("current", "current", "rocm", "legacy", "oldest"))
    if layout in ("current", "rocm"):
        middle = [
            f"elapsed time per iteration (ms): {ms:.1f}/{ms * 1.01:.1f}",
            f"compute per GPU (TFLOP/s/GPU): {tflops:.1f} (avg {tflops * 0.99:.1f}) ",
            f"tokens/s/GPU inst/harmonic mean: {tokens:.1f}/{tokens * 0.99:.1f}",
        ]
    elif layout == "legacy":
        middle = [
            f"elapsed time per iteration (ms): {ms:.1f}/{ms * 1.01:.1f}",
            memory.replace("GB/", "GB/ ", 1),
            f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f}/{tflops * 0.99:.1f}",
            f"tokens per GPU (tokens/s/GPU): {tokens:.1f}/{tokens * 0.99:.1f}",
        ]
    else:
        middle = [
            f"elapsed time per iteration (ms): {ms:.1f}/{ms * 1.01:.1f}",
            f"mem usages: {used / 191.98:.4f}",
            f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f}/{tflops * 0.99:.1f}",
        ]
    segments = [
        f"iteration {job.iteration:8d}/{500_000:8d}",
        f"consumed samples: {job.iteration * 64:12d}",
        *middle,
        f"learning rate: {r.uniform(1e-6, 3e-4):.6E}",
        "global batch size:    64",
        f"lm loss: {r.uniform(1.5, 9):.6E}",
        "loss scale: 1.0",
        f"grad norm: {r.uniform(0.2, 4):.3f}",
        "number of skipped iterations:   0",
        "number of nan iterations:   0",
    ]
    if layout in ("current", "rocm"):
        segments[0] = f"[{job.stamp()}.{r.randrange(10**6):06d}] " + segments[0]
        segments.append(memory)
    if layout == "rocm":
        segments += [
            memory.replace("hip", "rocm"),
            f"rank-{job.rank} rocm max mem usage/usage_ratio: {used + 8:.2f}GB/{ratio + 4:.2f}%",
        ]
    prefix = f"[{job.stamp('', ' ')}][rank-{job.rank}/{job.rank + 1}]<INFO> "
    if r.random() < 0.1:  # a terminal attached: loguru colours the prefix
        prefix = f"\x1b[32m{prefix[:-8]}\x1b[0m\x1b[36m{prefix[-8:]}\x1b[0m"
    return prefix + " " + " | ".join(segments)


def timers_block(job: _Job) -> list[str]:
    if job.rng.random() < 2 / 3:
        return []
    lines = ["(min, max) time across ranks (ms):"]
    for name in _TIMERS:
        low = job.rng.uniform(1, 5000)
        lines.append(f"    {name} {'.' * (48 - len(name))}: ({low:.2f}, {low * 1.01:.2f})")
    return lines


_RED, _GREEN, _ORANGE, _TURQUOISE = (
    "\033[31m",
    "\033[32m",
    "\033[38;2;180;60;0m",
    "\033[38;2;54;234;195m",
)
_BLUE, _CYAN, _MAGENTA, _RESET = "\033[34m", "\033[36m", "\033[35m", "\033[39m"


def torchtitan_line(job: _Job) -> str:
    r = job.rng
    head = f"[titan] {job.stamp()},{r.randrange(1000):03d} - root - INFO - "
    memory = f"memory: {r.uniform(30, 90):5.2f}GiB({r.uniform(20, 60):.2f}%)"
    tps = f"tps: {round(r.uniform(3000, 14000)):,}"
    if r.random() < 0.2:  # before 2025-02: no tflops, grad_norm, colours of its own
        body = f"step: {job.iteration:2}  loss: {r.uniform(2, 9):7.4f}  {memory}  {tps}  mfu: N/A"
    else:
        tflops = f"tflops: {r.uniform(200, 1500):,.2f}"
        body = (
            f"{_RED}step: {job.iteration:2}  {_GREEN}loss: {r.uniform(2, 9):8.5f}  "
            f"{_ORANGE}grad_norm: {r.uniform(0.2, 4):7.4f}  {_TURQUOISE}{memory}  "
            f"{_BLUE}{tps}  {_CYAN}{tflops}  {_MAGENTA}mfu: {r.uniform(20, 50):.2f}%{_RESET}"
        )
    prefix = job.rng.choice(("[rank0]:", "[rank0]:", "[default0]:", ""))
    return f"{prefix}{head}{body}"


def deepspeed_lines(job: _Job) -> list[Line]:
    r = job.rng
    logger = f"[{job.stamp()},{r.randrange(1000):03d}] [INFO] [logging.py:128:log_dist] [Rank 0] "
    lr = r.uniform(1e-6, 3e-4)
    lines = [
        (
            "deepspeed",
            logger + f"step={job.iteration}, skipped=0, lr=[{lr:.4e}], mom=[(0.9, 0.95)]",
        ),
        (
            "deepspeed",
            f"epoch=0/micro_step={job.iteration * 4}/global_step={job.iteration}, "
            f"RunningAvgSamplesPerSec={r.uniform(20, 40)}, CurrSamplesPerSec={r.uniform(20, 40)}, "
            f"MemAllocated={r.uniform(20, 60):.2f}GB, MaxMemAllocated={r.uniform(60, 80):.2f}GB",
        ),
    ]
    if r.random() < 0.3:  # pipeline engine
        lines.append(
            (
                "deepspeed",
                f"steps: {job.iteration} loss: {r.uniform(2, 9):.4f} iter time (s): "
                f"{r.uniform(1, 3):.3f} samples/sec: {r.uniform(20, 40):.3f}",
            )
        )
    breakdown = (
        logger + "time (ms) | fwd_microstep: 1234.56 | bwd_microstep: 2345.67 | "
        "bwd_inner_microstep: 2201.10 | bwd_allreduce_microstep: 144.50 | step_microstep: 12.34"
    )
    return [*lines, ("framework-info", breakdown), job.noise()]


def hf_lines(job: _Job) -> list[Line]:
    r = job.rng
    total = 4710
    bars = []
    for _ in range(r.randrange(1, 6)):
        job.iteration = job.iteration % total + 1
        done = job.iteration * 100 // total
        bars.append(
            f"{done:3d}%|{'█' * (done // 10):<10}| {job.iteration}/{total} "
            f"[01:02<07:35,  {r.uniform(1, 3):.2f}it/s]"
        )
    lines: list[Line] = [("tqdm", "\r".join(bars)), ("tqdm", "\r".join(bars))]
    logged = (
        f"{{'loss': {r.uniform(1, 3):.4f}, 'grad_norm': {r.uniform(0.2, 4)}, "
        f"'learning_rate': {r.uniform(1e-6, 5e-5):.1e}, 'epoch': {job.iteration / total:.2f}}}"
    )
    return [*lines, ("hf-trainer", "\r".join(bars[-1:]) + logged)]


def _block(kind: str, job: _Job) -> list[Line]:
    job.step()
    if kind in ("megatron", "primus"):
        line = megatron_line(job) if kind == "megatron" else primus_line(job)
        timers = [("timers", timer) for timer in timers_block(job)]
        return [(kind, line), *timers, job.noise()]
    if kind == "torchtitan":
        return [("torchtitan", torchtitan_line(job)), job.noise()]
    if kind == "deepspeed":
        return deepspeed_lines(job)
    return hf_lines(job)


def build_corpus(lines: int = 100_000, *, seed: int = 21) -> list[Line]:
    """About `lines` log lines, each with its kind, from jobs drawn by BLOCK_WEIGHTS."""
    rng = random.Random(seed)
    jobs = {kind: _Job(rng) for kind in BLOCK_WEIGHTS}
    kinds, weights = list(BLOCK_WEIGHTS), list(BLOCK_WEIGHTS.values())
    corpus: list[Line] = []
    while len(corpus) < lines:
        kind = rng.choices(kinds, weights)[0]
        corpus += _block(kind, jobs[kind])
    return corpus


def _cpu_seconds(texts: Sequence[str], parse: Callable[[str], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for text in texts:
            parse(text)
        best = min(best, time.process_time() - started)
    return max(best, 1e-9)


def measure(corpus: Sequence[Line], *, repeat: int = 3) -> LoadFigures:
    """parse_line's lines/s per core over `corpus` (the best of `repeat` passes), and per kind."""
    texts = [text for _, text in corpus]
    parse = parsing.parse_line
    iterations = sum(parse(text) is not None for text in texts)
    overall = _cpu_seconds(texts, parse, repeat)
    kinds = []
    for kind in sorted({kind for kind, _ in corpus}):
        mine = [text for k, text in corpus if k == kind]
        seconds = _cpu_seconds(mine, parse, repeat)
        kinds.append(KindFigures(kind=kind, lines=len(mine), lines_per_second=len(mine) / seconds))
    return LoadFigures(
        lines=len(texts),
        iteration_lines=iterations,
        lines_per_second=len(texts) / overall,
        kinds=tuple(kinds),
    )


if __name__ == "__main__":
    print(json.dumps(measure(build_corpus()).as_dict(), indent=2))
