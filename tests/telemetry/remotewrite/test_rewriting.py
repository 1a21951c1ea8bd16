"""The Rewriter: each pair of versions, answers that follow the Relabeler's generation, and many
threads rewriting at once getting exactly the reference's bytes."""

from __future__ import annotations

import threading

from lens.proto._generated.io.prometheus.write.v2 import types_pb2 as v2_pb2
from lens.proto._generated.prometheus import remote_pb2
from lens.telemetry.remotewrite.protocol import Version
from lens.telemetry.remotewrite.rewriting import Rewriter
from tests.telemetry.remotewrite.reference import GpuRelabeler, reference_v1


def _request(gpus: range, *, value: float = 1.0) -> bytes:
    request = remote_pb2.WriteRequest()
    for gpu in gpus:
        series = request.timeseries.add()
        series.labels.add(name="__name__", value="amd_gpu_power_watts")
        series.labels.add(name="gpu", value=str(gpu))
        series.samples.add(value=value, timestamp=1787486401482 + gpu)
    return request.SerializeToString()


def _labels_v1(body: bytes) -> list[dict[str, str]]:
    return [
        {x.name: x.value for x in s.labels}
        for s in remote_pb2.WriteRequest.FromString(body).timeseries
    ]


def _labels_v2(body: bytes) -> list[dict[str, str]]:
    request = v2_pb2.Request.FromString(body)
    table = request.symbols
    return [
        {
            table[s.labels_refs[i]]: table[s.labels_refs[i + 1]]
            for i in range(0, len(s.labels_refs), 2)
        }
        for s in request.timeseries
    ]


def test_every_pair_of_versions_gives_the_same_series() -> None:
    rewriter = Rewriter(GpuRelabeler(extra=(("pod", "p"),)))
    raw = _request(range(3))
    as_v1 = rewriter.rewrite(raw, received=Version.V1, to=Version.V1)
    as_v2 = rewriter.rewrite(raw, received=Version.V1, to=Version.V2)
    v2_to_v1 = rewriter.rewrite(as_v2.body, received=Version.V2, to=Version.V1)
    v2_to_v2 = rewriter.rewrite(as_v2.body, received=Version.V2, to=Version.V2)
    want = [{"__name__": "amd_gpu_power_watts", "gpu": str(gpu), "pod": "p"} for gpu in range(3)]
    assert _labels_v1(as_v1.body) == _labels_v2(as_v2.body) == want
    assert _labels_v1(v2_to_v1.body) == _labels_v2(v2_to_v2.body) == want
    assert v2_to_v1.body == as_v1.body
    assert [r.samples for r in (as_v1, as_v2, v2_to_v1, v2_to_v2)] == [3, 3, 3, 3]
    assert [r.relabelled for r in (as_v1, as_v2, v2_to_v1, v2_to_v2)] == [3, 3, 0, 0]


def test_a_new_generation_brings_the_new_answers() -> None:
    relabeler = GpuRelabeler(extra=(("pod", "first"),))
    rewriter = Rewriter(relabeler, max_cached=16)
    raw = _request(range(2))
    for to, labels_of in ((Version.V1, _labels_v1), (Version.V2, _labels_v2)):
        relabeler.change((("pod", "first"),))
        assert (
            labels_of(rewriter.rewrite(raw, received=Version.V1, to=to).body)[0]["pod"] == "first"
        )
        relabeler.extra = (("pod", "second"),)  # not yet published: the cache still answers
        assert (
            labels_of(rewriter.rewrite(raw, received=Version.V1, to=to).body)[0]["pod"] == "first"
        )
        relabeler.change((("pod", "second"),))
        assert (
            labels_of(rewriter.rewrite(raw, received=Version.V1, to=to).body)[0]["pod"] == "second"
        )


def test_many_threads_at_once_get_the_reference_bytes() -> None:
    relabeler = GpuRelabeler()
    rewriter = Rewriter(relabeler, max_cached=40)  # small: the cache turns while threads read
    bodies = [_request(range(start, start + 30), value=start / 7) for start in range(0, 120, 10)]
    expected = [reference_v1(body, relabeler) for body in bodies]
    wrong: list[int] = []

    def work(offset: int) -> None:
        for round_ in range(40):
            index = (offset + round_) % len(bodies)
            done = rewriter.rewrite(bodies[index], received=Version.V1, to=Version.V1)
            if done.body != expected[index] or done.samples != 30:
                wrong.append(index)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
