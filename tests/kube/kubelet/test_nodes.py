from __future__ import annotations

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
