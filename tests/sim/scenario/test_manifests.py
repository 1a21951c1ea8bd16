from __future__ import annotations

from lens.sim.scenario import manifests


def test_a_finished_pod_keeps_its_container_ids_and_ends_ready_conditions() -> None:
    pod = manifests.pod(
        "p",
        "ns",
        manifests.pod_template("app", gpus=2, resource="amd.com/gpu"),
        owners=[],
        node_name="n",
        labels={},
    )
    pod["metadata"]["uid"] = "u"
    running = manifests.running_status(
        pod, started="2026-01-01T00:00:00Z", host_ip="192.168.0.1", pod_ip="10.0.0.2"
    )
    done = manifests.finished_status(running, failed=False, finished="2026-01-01T01:00:00Z")
    assert done["phase"] == "Succeeded"
    terminated = done["containerStatuses"][0]["state"]["terminated"]
    assert (
        terminated["exitCode"] == 0
        and terminated["containerID"] == running["containerStatuses"][0]["containerID"]
    )
    ready = {c["type"]: c["status"] for c in done["conditions"]}
    assert ready["Ready"] == "False" and ready["PodScheduled"] == "True"
    assert manifests.container_id("u", "main") == running["containerStatuses"][0]["containerID"]


def test_nodes_publish_gpu_capacity_and_labels_by_vendor() -> None:
    amd = manifests.node("a", model="MI300X", gpus=8, address="192.168.0.1")
    nvidia = manifests.node("b", model="H100", gpus=4, address="192.168.0.2")
    assert amd["status"]["capacity"]["amd.com/gpu"] == "8"
    assert nvidia["status"]["capacity"]["nvidia.com/gpu"] == "4"
    assert "nvidia.com/gpu.product" in nvidia["metadata"]["labels"]
