from __future__ import annotations

from lens.sim.kubelet import summary

POD = {
    "metadata": {
        "name": "p",
        "namespace": "ml",
        "uid": "u-1",
        "creationTimestamp": "2027-01-15T08:00:00Z",
    },
    "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
}
START = 1_800_000_000.0


def test_ephemeral_storage_adds_up_the_containers_and_volumes() -> None:
    stats = summary.pod_stats(POD, START + 100)
    containers = sum(c["rootfs"]["usedBytes"] + c["logs"]["usedBytes"] for c in stats["containers"])
    volumes = sum(v["usedBytes"] for v in stats["volume"])
    assert stats["ephemeral-storage"]["usedBytes"] == containers + volumes
    assert stats["podRef"] == {"name": "p", "namespace": "ml", "uid": "u-1"}
    assert stats["startTime"] == "2027-01-15T08:00:00Z"


def test_the_node_filesystem_includes_the_pods() -> None:
    empty = summary.summary("n", [], START, boot=START - 3600)
    full = summary.summary("n", [POD], START, boot=START - 3600)
    pod_bytes = full["pods"][0]["ephemeral-storage"]["usedBytes"]
    assert full["node"]["fs"]["usedBytes"] == empty["node"]["fs"]["usedBytes"] + pod_bytes
    assert full["node"]["startTime"] == "2027-01-15T07:00:00Z"
