"""Remote-write load for the intake benchmark: 1.0 requests as Prometheus sends them after
scraping dcgm-exporter and AMD's device-metrics-exporter on GPU nodes, and the CPU time per
sample of Lens's Rewriter against the straightforward rewrite with the protobuf classes.

Both sides do the whole work of a request: snappy decompress, decode, relabel every series
through the same Relabeler, encode, snappy compress. Every series recurs in every scrape (as
exporters' series do), in requests of 2,000 series of one sample each, in a new order each
scrape. Rates are samples per CPU second of this one thread
(time.process_time), after one untimed pass that fills the Rewriter's cache: the steady state
of a receiver that sees the same series every scrape interval.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lens.proto._generated.prometheus import remote_pb2
from lens.telemetry.remotewrite import protocol
from lens.telemetry.remotewrite.protocol import Labels, Relabeler, Version
from lens.telemetry.remotewrite.rewriting import Rewriter

MAX_BYTES = 64 << 20
SCRAPE_MS = 15_000
START_MS = 1_787_486_400_000

# dcgm-exporter's default counters (etc/default-counters.csv) and value ranges.
DCGM_METRICS = (
    ("DCGM_FI_DEV_SM_CLOCK", 1980.0),
    ("DCGM_FI_DEV_MEM_CLOCK", 2619.0),
    ("DCGM_FI_DEV_MEMORY_TEMP", 0.0),
    ("DCGM_FI_DEV_GPU_TEMP", 61.0),
    ("DCGM_FI_DEV_POWER_USAGE", 654.32),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 9.8e10),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 0.0),
    ("DCGM_FI_DEV_GPU_UTIL", 97.0),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", 41.0),
    ("DCGM_FI_DEV_ENC_UTIL", 0.0),
    ("DCGM_FI_DEV_DEC_UTIL", 0.0),
    ("DCGM_FI_DEV_XID_ERRORS", 0.0),
    ("DCGM_FI_DEV_FB_FREE", 10325.0),
    ("DCGM_FI_DEV_FB_USED", 71234.0),
    ("DCGM_FI_DEV_FB_RESERVED", 512.0),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", 3.2e9),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 0.0),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 0.0),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", 0.0),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.93),
)
# AMD device-metrics-exporter's gpu_* families.
AMD_METRICS = (
    ("gpu_gfx_activity", 98.0),
    ("gpu_umc_activity", 37.0),
    ("gpu_mma_activity", 71.0),
    ("gpu_package_power", 712.0),
    ("gpu_average_package_power", 698.0),
    ("gpu_edge_temperature", 0.0),
    ("gpu_junction_temperature", 74.0),
    ("gpu_memory_temperature", 66.0),
    ("gpu_used_vram", 1.6e11),
    ("gpu_free_vram", 4.1e10),
    ("gpu_total_vram", 2.06e11),
    ("gpu_energy_consumed", 4.4e12),
    ("gpu_clock", 2100.0),
    ("gpu_power_usage", 705.0),
    ("gpu_ecc_correct_total", 0.0),
    ("gpu_ecc_uncorrect_total", 0.0),
    ("pcie_bandwidth", 2.2e4),
    ("pcie_replay_count", 0.0),
    ("gpu_xgmi_link_rx", 1.1e9),
    ("gpu_xgmi_link_tx", 1.1e9),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Corpus:
    """Snappy-compressed 1.0 request bodies, in the order a receiver gets them."""

    bodies: tuple[bytes, ...]
    series: int  # distinct series, each in every scrape
    samples: int  # in all bodies
    raw_bytes: int  # all bodies uncompressed


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """One measurement of both sides over the same corpus."""

    requests: int
    samples: int
    series_per_request: float
    raw_bytes_per_request: int
    compressed_bytes_per_request: int
    relabelled_share: float  # of series the Relabeler changed
    lens_cpu_seconds: float
    baseline_cpu_seconds: float
    lens_samples_per_second: float  # per core
    baseline_samples_per_second: float
    ratio: float  # lens over baseline
    same_bodies: bool  # both sides wrote byte-identical requests


def nvidia_series(node: int, gpu: int) -> list[tuple[Labels, float]]:
    """dcgm-exporter's series of one GPU as Prometheus stores them: the exporter's labels plus
    job and instance, pod labels only while a pod holds the GPU (empty ones are dropped)."""
    common = {
        "gpu": str(gpu),
        "UUID": f"GPU-{node:08x}-{gpu:04x}-4e5f-8a9b-{node * 8 + gpu:012x}",
        "pci_bus_id": f"00000000:{0x18 + 0x10 * gpu:02X}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA H100 80GB HBM3",
        "Hostname": f"gpu-node-{node:03d}",
        "DCGM_FI_DRIVER_VERSION": "550.54.15",
        "instance": f"10.12.{node // 200}.{node % 200 + 10}:9400",
        "job": "dcgm-exporter",
    }
    if gpu % 2 == 0:
        common |= {"namespace": "ml", "pod": f"llama-{node}-0", "container": "trainer"}
    return [(_sorted(common | {"__name__": name}), value) for name, value in DCGM_METRICS]


def amd_series(node: int, gpu: int) -> list[tuple[Labels, float]]:
    """device-metrics-exporter's series of one MI300X as Prometheus stores them."""
    common = {
        "card_model": "102-G30211-0C",
        "card_series": "AMD Instinct MI300X OAM",
        "card_vendor": "AMD",
        "driver_version": "6.12.12",
        "gpu_compute_partition_type": "spx",
        "gpu_id": str(gpu),
        "gpu_memory_partition_type": "nps1",
        "gpu_partition_id": "0",
        "gpu_uuid": f"{node:08x}-0000-1000-80e0-{node * 8 + gpu:012x}",
        "hostname": f"gpu-node-{node:03d}",
        "serial_number": f"69240900{node * 8 + gpu:04d}",
        "vbios_version": "022.040.003.043.000001",
        "instance": f"10.12.{node // 200}.{node % 200 + 10}:5000",
        "job": "amd-device-metrics-exporter",
    }
    return [(_sorted(common | {"__name__": name}), value) for name, value in AMD_METRICS]


def _sorted(labels: dict[str, str]) -> Labels:
    return tuple(sorted((name, value) for name, value in labels.items() if value))


def build_corpus(
    *, nodes: int = 64, gpus: int = 8, scrapes: int = 3, per_request: int = 2000, seed: int = 7
) -> Corpus:
    """Every series of `nodes` GPU nodes, half NVIDIA and half AMD, in `scrapes` scrapes."""
    every = [
        entry
        for node in range(nodes)
        for gpu in range(gpus)
        for entry in (nvidia_series if node % 2 == 0 else amd_series)(node, gpu)
    ]
    rng = random.Random(seed)
    # One shard's stream: each scrape's series in a fresh order, cut into full requests as
    # Prometheus's queue cuts them (max_samples_per_send), across scrape boundaries.
    stream = [
        (labels, value, scrape)
        for scrape in range(scrapes)
        for labels, value in rng.sample(every, len(every))
    ]
    bodies: list[bytes] = []
    raw_bytes = 0
    for first in range(0, len(stream), per_request):
        raw = _request(stream[first : first + per_request], rng)
        raw_bytes += len(raw)
        bodies.append(protocol.compress(raw))
    return Corpus(
        bodies=tuple(bodies), series=len(every), samples=len(every) * scrapes, raw_bytes=raw_bytes
    )


def _request(entries: list[tuple[Labels, float, int]], rng: random.Random) -> bytes:
    request = remote_pb2.WriteRequest()
    for labels, typical, scrape in entries:
        series = request.timeseries.add()
        for name, value in labels:
            series.labels.add(name=name, value=value)
        value = round(typical * rng.uniform(0.9, 1.1), 2) if typical else 0.0
        when = START_MS + scrape * SCRAPE_MS + rng.randrange(1000)
        series.samples.add(value=value, timestamp=when)
    return request.SerializeToString()


def lens_rewrite(rewriter: Rewriter, body: bytes) -> tuple[bytes, int]:
    """One request through Lens: the compressed body to forward, and its samples."""
    raw = protocol.decompress(body, "snappy", max_bytes=MAX_BYTES)
    done = rewriter.rewrite(raw, received=Version.V1, to=Version.V1)
    return protocol.compress(done.body), done.samples


def baseline_rewrite(relabeler: Relabeler, body: bytes) -> tuple[bytes, int]:
    """One request the straightforward way: parse with the protobuf classes, relabel each
    series' labels in a Python loop, serialize."""
    raw = protocol.decompress(body, "snappy", max_bytes=MAX_BYTES)
    request = remote_pb2.WriteRequest.FromString(raw)
    samples = 0
    for series in request.timeseries:
        labels = tuple(sorted((label.name, label.value) for label in series.labels if label.value))
        answer = relabeler.relabel(labels)
        if answer is not None:
            del series.labels[:]
            for name, value in sorted(dict(answer).items()):
                if value:
                    series.labels.add(name=name, value=value)
        samples += len(series.samples)
    return protocol.compress(request.SerializeToString()), samples


def _cpu_seconds(work: Callable[[bytes], object], bodies: tuple[bytes, ...], rounds: int) -> float:
    started = time.process_time()
    for _ in range(rounds):
        for body in bodies:
            work(body)
    return time.process_time() - started


def _relabelled_share(rewriter: Rewriter, bodies: tuple[bytes, ...]) -> float:
    done = [
        rewriter.rewrite(
            protocol.decompress(body, "snappy", max_bytes=MAX_BYTES),
            received=Version.V1,
            to=Version.V1,
        )
        for body in bodies
    ]
    return sum(d.relabelled for d in done) / max(1, sum(d.series for d in done))


def measure(relabeler: Relabeler, corpus: Corpus, *, rounds: int = 3) -> Figures:
    """Both sides over `corpus`, `rounds` times each after an untimed pass."""
    rewriter = Rewriter(relabeler)
    same = all(
        _raw(lens_rewrite(rewriter, body)[0]) == _raw(baseline_rewrite(relabeler, body)[0])
        for body in corpus.bodies
    )
    lens = _cpu_seconds(lambda body: lens_rewrite(rewriter, body), corpus.bodies, rounds)
    base = _cpu_seconds(lambda body: baseline_rewrite(relabeler, body), corpus.bodies, rounds)
    samples = corpus.samples * rounds
    count = len(corpus.bodies)
    return Figures(
        requests=count * rounds,
        samples=samples,
        series_per_request=corpus.samples / count,
        raw_bytes_per_request=corpus.raw_bytes // count,
        compressed_bytes_per_request=sum(map(len, corpus.bodies)) // count,
        relabelled_share=_relabelled_share(rewriter, corpus.bodies),
        lens_cpu_seconds=lens,
        baseline_cpu_seconds=base,
        lens_samples_per_second=samples / lens,
        baseline_samples_per_second=samples / base,
        ratio=base / lens,
        same_bodies=same,
    )


def _raw(body: bytes) -> bytes:
    return protocol.decompress(body, "snappy", max_bytes=MAX_BYTES)


def gpu_series(corpus: Corpus) -> Iterator[Labels]:
    """The label set of every series, each once, as the first scrape sends them (for building
    a Relabeler's index)."""
    seen = 0
    for body in corpus.bodies:
        for series in remote_pb2.WriteRequest.FromString(_raw(body)).timeseries:
            if seen == corpus.series:
                return
            seen += 1
            yield tuple((label.name, label.value) for label in series.labels)
