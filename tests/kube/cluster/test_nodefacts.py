"""Node facts from Node objects as the API serves them, and quantities parsed exactly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.kube.cluster import nodefacts
from lens.kube.cluster.nodefacts import NOT_READY, READY, UNKNOWN, Taint
from lens.runtime import errors
from lens.sim.scenario import manifests

RESOURCES = ("amd.com/gpu", "nvidia.com/gpu")
MODEL_LABELS = ("amd.com/gpu.product-name", "nvidia.com/gpu.product")


def _facts(node: dict[str, Any], **kwargs: Any) -> nodefacts.NodeFacts:
    return nodefacts.facts(node, gpu_resources=RESOURCES, gpu_model_labels=MODEL_LABELS, **kwargs)


def test_a_gpu_nodes_facts_come_from_its_object() -> None:
    node = manifests.node("gpu-0001", model="MI300X", gpus=8, address="10.0.0.7")
    node["metadata"]["labels"]["example.com/cpu-model"] = "AMD_EPYC_9654"
    node["spec"]["taints"] = [{"key": "amd.com/gpu", "effect": "NoSchedule"}]
    facts = _facts(node, cpu_model_label="example.com/cpu-model")
    assert (facts.name, facts.address, facts.gpu_capacity, facts.status) == (
        "gpu-0001",
        "10.0.0.7",
        8,
        READY,
    )
    assert facts.gpu_model == "AMD_Instinct_MI300X"
    assert (facts.cpu_model, facts.cpu_count) == ("AMD_EPYC_9654", 192)
    assert facts.memory == "2113459300Ki" and facts.memory_bytes == 2113459300 * 1024
    assert (facts.os, facts.kernel_version) == ("Ubuntu 22.04.5 LTS", "5.15.0-131-generic")
    assert (facts.kubelet_version, facts.container_runtime) == ("v1.31.4", "containerd://1.7.24")
    assert facts.taints == (Taint(key="amd.com/gpu", value="", effect="NoSchedule"),)
    assert facts.is_gpu_node


def test_the_ready_condition_names_the_status() -> None:
    node = manifests.node("n", model="MI300X", gpus=8, address="10.0.0.7", ready=False)
    assert _facts(node).status == UNKNOWN  # a lost node: the node controller's Unknown
    node["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert _facts(node).status == NOT_READY
    node["status"]["conditions"] = []
    assert _facts(node).status == UNKNOWN


def test_a_node_without_gpus_or_model_is_not_a_gpu_node() -> None:
    node = {"metadata": {"name": "cpu-1"}, "status": {"capacity": {"cpu": "64"}}}
    assert not _facts(node).is_gpu_node


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("128974848", 128974848),
        ("129e6", 129_000_000),
        ("129M", 129_000_000),
        ("123Mi", 123 * 2**20),
        ("1.5Gi", 3 * 2**29),
        ("2113459300Ki", 2113459300 * 1024),
        ("1E", 10**18),
        ("1500m", 1),
        ("0.5", 0),
    ],
)
def test_quantities_are_read_as_kubernetes_writes_them(text: str, value: int) -> None:
    assert nodefacts.parse_quantity_bytes(text) == value


@pytest.mark.parametrize("text", ["", "Gi", "12Xi", "1e", "--1", "1e99999", "9" * 30])
def test_a_bad_quantity_is_a_lens_error_naming_it(text: str) -> None:
    with pytest.raises(errors.SourceError, match="quantity"):
        nodefacts.parse_quantity_bytes(text)


@given(st.text(max_size=40))
def test_no_text_makes_the_quantity_parser_raise_anything_else(text: str) -> None:
    try:
        value = nodefacts.parse_quantity_bytes(text)
    except errors.SourceError as exc:
        assert "quantity" in str(exc)
    else:
        assert isinstance(value, int) and abs(value) < 2**63


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "status",
                    "spec",
                    "capacity",
                    "nodeInfo",
                    "conditions",
                    "labels",
                    "name",
                    "taints",
                    "memory",
                    "cpu",
                    "amd.com/gpu",
                    "type",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(JSON)
def test_any_json_gives_facts_never_an_exception(node: object) -> None:
    facts = _facts(node)  # type: ignore[arg-type]
    assert facts.gpu_capacity >= 0 and facts.cpu_count >= 0
