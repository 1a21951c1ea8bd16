"""The remote-write load: a corpus of GPU exporters' series recurring every scrape, and both
sides of the measurement writing the same bodies, Lens's faster."""

from __future__ import annotations

from bench import remotewrite_load
from lens.proto._generated.prometheus import remote_pb2
from lens.telemetry.remotewrite import protocol
from lens.telemetry.remotewrite.protocol import Labels


class WorkloadRelabeler:
    """Adds a workload to series of NVIDIA (gpu) and AMD (gpu_id) GPUs on even nodes."""

    def generation(self) -> int:
        return 0

    def relabel(self, labels: Labels) -> Labels | None:
        found = dict(labels)
        host = found.get("Hostname") or found.get("hostname") or ""
        if ("gpu" in found or "gpu_id" in found) and host[-1:] in "02468":
            return (*labels, ("workload_kind", "PyTorchJob"), ("workload_name", "llama"))
        return None


def _series_of(body: bytes) -> list[remote_pb2.prometheus_dot_types__pb2.TimeSeries]:
    raw = protocol.decompress(body, "snappy", max_bytes=1 << 24)
    return list(remote_pb2.WriteRequest.FromString(raw).timeseries)


def test_the_corpus_repeats_every_series_each_scrape_in_full_requests() -> None:
    corpus = remotewrite_load.build_corpus(nodes=4, gpus=2, scrapes=3, per_request=50)
    assert corpus.series == 4 * 2 * 20 and corpus.samples == 3 * corpus.series
    requests = [_series_of(body) for body in corpus.bodies]
    assert [len(r) for r in requests] == [50] * 9 + [30]
    seen: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for series in (s for r in requests for s in r):
        labels = tuple((x.name, x.value) for x in series.labels)
        assert [x.name for x in series.labels] == sorted(x.name for x in series.labels)
        assert 10 <= len(labels) <= 16 and len(series.samples) == 1
        seen.setdefault(labels, []).append(series.samples[0].timestamp // 15_000)
    assert len(seen) == corpus.series
    assert all(
        sorted(scrapes) == sorted(set(scrapes)) and len(scrapes) == 3 for scrapes in seen.values()
    )
    names = {dict(labels)["__name__"] for labels in seen}
    assert {"DCGM_FI_DEV_GPU_UTIL", "gpu_gfx_activity"} <= names
    assert sorted(remotewrite_load.gpu_series(corpus)) == sorted(seen)


def test_both_sides_write_the_same_bodies_and_lens_is_faster() -> None:
    corpus = remotewrite_load.build_corpus(nodes=4, gpus=4, scrapes=2, per_request=100)
    figures = remotewrite_load.measure(WorkloadRelabeler(), corpus, rounds=2)
    assert figures.same_bodies
    assert figures.samples == 2 * 2 * 4 * 4 * 20 and figures.requests == 2 * 7
    assert figures.relabelled_share == 0.5  # nodes 0 and 2 of 0-3
    assert figures.series_per_request == 640 / 7
    assert figures.lens_samples_per_second > figures.baseline_samples_per_second
    assert figures.ratio == figures.baseline_cpu_seconds / figures.lens_cpu_seconds
