"""Holder labels at scrape: every GPU and RDMA port series names the container holding the
device as it was read (pod, namespace, container, holders), the longest holder when several
do, and lens_gpu_holder_info / lens_ib_port_holder_info list them all."""

from __future__ import annotations

import http.client
import subprocess
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lens.containers.model import Container, Device, Pod
from lens.roles.node_agent.holders import HOLDER_LABELS, Held, HolderIndex
from lens.roles.node_agent.main import NodeAgent
from lens.runtime.clock import FakeClock
from lens.sim.containerd import PrivateContainerd, pod_labels
from lens.sim.hosts.nvml import FakeNvml
from lens.sim.hosts.tree import HostTree
from tests.roles.node_agent.conftest import MakeAgent
from tests.roles.node_agent.processes import Pipeline

Series = dict[str, list[dict[str, str]]]  # family -> every sample's labels


def _container(
    cid: str,
    pod: str,
    *,
    gpus: Sequence[str] = (),
    rdma: Sequence[str] = (),
    created: float = 100.0,
    status: str = "Running",
    exited_at: float | None = None,
    name: str = "main",
) -> Container:
    devices = tuple(Device(type="gpu", name="GPU", number=0, uuid=u) for u in gpus) + tuple(
        Device(type="ib", name=d, number=0, uuid=f"guid-{d}") for d in rdma
    )
    return Container(
        id=cid,
        name=name,
        pod=Pod(uid=f"uid-{pod}", name=pod, namespace="team-a"),
        devices=devices,
        created_at=created,
        status=status,
        exited_at=exited_at,
    )


def test_the_longest_holder_names_a_device_and_holders_counts_every_live_one() -> None:
    index = HolderIndex.of(
        [
            _container("c2", "late", gpus=["G0"], created=200.0, name="sidecar"),
            _container("c1", "early", gpus=["G0", "G1"], rdma=["mlx5_0"], created=100.0),
            _container("c3", "gone", gpus=["G1"], created=50.0, status="Exit", exited_at=150.0),
            _container("c4", "oom", gpus=["G2"], created=50.0, status="OOMKilled"),
        ]
    )
    assert [h.pod for h in index.gpus["G0"]] == ["early", "late"]
    assert Held("gpu", index.gpus["G0"]).labels() == ("early", "team-a", "main", "2")
    assert Held("gpu", index.gpus["G1"]).labels() == ("early", "team-a", "main", "1")
    assert "G2" not in index.gpus  # an ended container holds nothing
    assert Held("gpu").labels() == ("", "", "", "0")
    assert [h.pod for h in index.rdma["mlx5_0"]] == ["early"]


def _scraped(text: str) -> Series:
    found: Series = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(dict(sample.labels))
    return found


def _rendered(agent_text: Callable[[], str]) -> Series:
    return _scraped(agent_text())


def _gpu_series(series: Series) -> dict[str, list[dict[str, str]]]:
    return {
        name: samples
        for name, samples in series.items()
        if (name.startswith("lens_gpu_") or name == "gpu_utilization")
        and name != "lens_gpu_holder_info"
    }


def _next_cycle(agent: NodeAgent, clock: FakeClock) -> None:
    clock.advance(1.0)
    agent.cycle.run()


def test_every_gpu_and_port_series_names_its_holder(
    mi300x: HostTree,
    make_agent: MakeAgent,
    clock: FakeClock,
    promtool_problems: Callable[[bytes], str],
) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu", "rdma"))
    agent.cycle.run()
    uuids = [gpu.uuid for gpu, _ in agent.state.known_gpus()]
    port_device = mi300x.node.nics[0].name
    containers = [
        _container("c1", "trainer-0", gpus=uuids[:2], rdma=[port_device], created=100.0),
        _container("c2", "profiler", gpus=uuids[1:2], created=300.0, name="prof"),
    ]
    agent.holders.attach(lambda: containers)
    _next_cycle(agent, clock)
    text = agent.cycle.render_text()
    series = _scraped(text)
    gpu_series = _gpu_series(series)
    assert "gpu_utilization" in gpu_series and "lens_gpu_utilization_ratio" in gpu_series
    indexes = {g.index: g.uuid for g, _ in agent.state.known_gpus()}
    for name, samples in gpu_series.items():
        for labels in samples:
            gpu = labels.get("gpu", labels.get("gpu_id"))
            assert gpu is not None, (name, labels)
            held = indexes[int(gpu)] in uuids[:2]
            expected = ("trainer-0", "team-a", "main") if held else ("", "", "")
            assert (labels["pod"], labels["namespace"], labels["container"]) == expected, name
            assert labels["holders"] == {0: "1", 1: "2"}.get(int(gpu), "0"), (name, labels)
    holder_info = sorted(
        (labels["gpu"], labels["pod"], labels["container"])
        for labels in series["lens_gpu_holder_info"]
    )
    assert holder_info == [("0", "trainer-0", "main"), ("1", "profiler", "prof"),
                           ("1", "trainer-0", "main")]  # fmt: skip
    port_series = [
        (name, labels)
        for name, samples in series.items()
        if name.startswith("lens_ib_port_") and name != "lens_ib_port_holder_info"
        for labels in samples
    ]
    assert port_series
    for name, labels in port_series:
        expected_pod = "trainer-0" if labels["device"] == port_device else ""
        assert labels["pod"] == expected_pod, (name, labels)
    assert {labels["device"] for labels in series["lens_ib_port_holder_info"]} == {port_device}
    assert promtool_problems(text.encode()) == ""
    # The holders leave: the next reading names nobody, and no label set of theirs is left.
    containers.clear()
    _next_cycle(agent, clock)
    after = _scraped(agent.cycle.render_text())
    assert all(
        labels["pod"] == "" and labels["holders"] == "0"
        for samples in _gpu_series(after).values()
        for labels in samples
    )
    assert "lens_gpu_holder_info" not in after


def test_holder_labels_off_leaves_the_device_series_as_they_were_and_keeps_the_info(
    mi300x: HostTree, make_agent: MakeAgent, clock: FakeClock
) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu", "rdma"), holder_labels=False)
    agent.cycle.run()
    uuid = agent.state.known_gpus()[0][0].uuid
    agent.holders.attach(lambda: [_container("c1", "trainer-0", gpus=[uuid])])
    _next_cycle(agent, clock)
    series = _scraped(agent.cycle.render_text())
    for name, samples in _gpu_series(series).items():
        for labels in samples:
            assert not set(HOLDER_LABELS) & set(labels), (name, labels)
    [info] = series["lens_gpu_holder_info"]
    assert (info["gpu"], info["pod"], info["namespace"], info["container"]) == (
        "0",
        "trainer-0",
        "team-a",
        "main",
    )


def test_nvidia_gpus_carry_their_holders_too(
    h100: HostTree, make_agent: MakeAgent, clock: FakeClock
) -> None:
    nvml: FakeNvml = h100.nvml()
    agent = make_agent(h100, nvml=nvml, collectors=("nvidia",))
    agent.cycle.run()
    uuid = agent.state.known_gpus()[1][0].uuid
    agent.holders.attach(lambda: [_container("c1", "infer", gpus=[uuid])])
    _next_cycle(agent, clock)
    series = _scraped(agent.cycle.render_text())
    held = {labels["gpu_id"]: labels["pod"] for labels in series["gpu_utilization"]}
    assert held == {"0": "", "1": "infer"}


def _agent_metrics(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/metrics")
        return connection.getresponse().read().decode()
    finally:
        connection.close()


def _holders_of(text: str, family: str, key: str) -> dict[str, tuple[str, str, str, str]]:
    return {
        labels[key]: (labels["pod"], labels["namespace"], labels["container"], labels["holders"])
        for labels in _scraped(text).get(family, [])
    }


@pytest.mark.slow_timeout
def test_a_cri_labelled_container_on_a_real_containerd_names_the_gpu_and_port_it_holds(
    mi300x: HostTree,
    containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    tmp_path: Path,
    free_port: Callable[[], int],
    eventually: Callable[..., None],
    promtool_problems: Callable[[bytes], str],
) -> None:
    pipeline = Pipeline(
        tree=mi300x,
        ctd=containerd,
        url=empty_database_url,
        tmp=tmp_path,
        ports=[free_port(), free_port(), free_port()],
    )
    labels = pod_labels(pod="trainer-0", namespace="team-a", uid="uid-t0", container="main")
    name = f"holder-{uuid.uuid4().hex[:8]}"  # runc keeps state by id across containerds
    done: list[subprocess.CompletedProcess[str]] = []
    holder = threading.Thread(
        target=lambda: done.append(
            containerd.run(
                name,
                ["sleep", "8"],
                labels=labels,
                devices=[device_nodes["render"], device_nodes["uverbs"]],
            )
        )
    )
    try:
        pipeline.start(eventually)
        holder.start()
        held = ("trainer-0", "team-a", "main", "1")
        free = ("", "", "", "0")

        def holders_now() -> set[tuple[str, str, str, str]]:
            text = _agent_metrics(pipeline.agent_http)
            return set(_holders_of(text, "gpu_utilization", "gpu_id").values())

        eventually(lambda: held in holders_now(), timeout=20)
        text = _agent_metrics(pipeline.agent_http)
        gpus = _holders_of(text, "lens_gpu_utilization_ratio", "gpu")
        assert sorted(gpus.values()) == sorted([held] + [free] * (len(gpus) - 1))
        ports = _holders_of(text, "lens_ib_port_transmit_bytes_total", "device")
        assert ports["mlx5_0"] == held and {ports[d] for d in ports if d != "mlx5_0"} == {free}
        assert promtool_problems(text.encode()) == ""
        holder.join(60)
        assert [d.returncode for d in done] == [0], done
        # Gone: free again at the next reading.
        eventually(lambda: holders_now() == {free}, timeout=20)
    finally:
        holder.join(60)
        pipeline.agent.stop()
        pipeline.jobs.stop()
