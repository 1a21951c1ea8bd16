from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from lens.kube.kubelet import nodes


def _node(labels: dict[str, str], addresses: list[dict[str, str]]) -> dict[str, object]:
    return {
        "metadata": {"name": "gpu-1", "labels": labels},
        "status": {"addresses": addresses},
    }


def test_the_first_model_label_present_names_the_model() -> None:
    keys = ("amd.com/gpu.product-name", "nvidia.com/gpu.product")
    node = _node({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, [])
    assert nodes.gpu_model(node, keys) == "NVIDIA-H100-80GB-HBM3"
    both = _node({"amd.com/gpu.product-name": "MI300X", "nvidia.com/gpu.product": "x"}, [])
    assert nodes.gpu_model(both, keys) == "MI300X"
    assert nodes.gpu_model(_node({}, []), keys) == ""
    assert nodes.name_of(both) == "gpu-1"


def test_addresses_are_the_ip_ones_each_once() -> None:
    node = _node(
        {},
        [
            {"type": "InternalIP", "address": "10.0.0.5"},
            {"type": "Hostname", "address": "gpu-1"},
            {"type": "ExternalIP", "address": "2001:db8::5"},
            {"type": "ExternalIP", "address": "10.0.0.5"},
            {"type": "InternalIP", "address": "not-an-ip"},
        ],
    )
    assert nodes.addresses(node) == ["10.0.0.5", "2001:db8::5"]


def test_fields_of_the_wrong_type_read_as_absent() -> None:
    # A list where an object belongs raised AttributeError ("list has no attribute get").
    odd = {"metadata": ["gpu-1"], "status": {"addresses": ["10.0.0.5", {"type": "InternalIP"}]}}
    assert nodes.name_of(odd) == "" and nodes.gpu_model(odd, ("a",)) == ""
    assert nodes.addresses(odd) == []
    labelled = {"metadata": {"name": 7, "labels": {"a": ["MI300X"], "b": "MI300X"}}}
    assert nodes.name_of(labelled) == "" and nodes.gpu_model(labelled, ("a", "b")) == "MI300X"


JSON = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.ip_addresses().map(str)
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
NODES = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.one_of(JSON, st.fixed_dictionaries({"name": JSON, "labels": JSON})),
        "status": st.one_of(
            JSON,
            st.fixed_dictionaries(
                {
                    "addresses": st.lists(
                        st.one_of(
                            JSON,
                            st.fixed_dictionaries(
                                {
                                    "type": st.sampled_from(["InternalIP", "Hostname"]),
                                    "address": JSON,
                                }
                            ),
                        ),
                        max_size=3,
                    )
                }
            ),
        ),
    },
)


@given(st.one_of(JSON, NODES))
def test_any_node_object_reads_as_names_and_addresses(node: object) -> None:
    assert isinstance(nodes.name_of(node), str)
    assert isinstance(nodes.gpu_model(node, ("a", "b")), str)
    for address in nodes.addresses(node):
        ipaddress.ip_address(address)
