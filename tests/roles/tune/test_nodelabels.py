"""The daemon's node labels: the configured ones, the Node's from the API over them, read again
on refresh; a failed read keeps the last."""

from __future__ import annotations

import kubernetes
import pytest

from lens.roles.tune.nodelabels import NodeLabels
from lens.runtime import errors
from lens.runtime.config import TuneConfig
from lens.sim.kube.server import KubeApiServer


def _node(labels: dict[str, str]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": labels}}


def test_the_nodes_labels_come_over_the_configured_ones(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(_node({"gpu": "yes", "zone": "a"}))
    labels = NodeLabels(
        TuneConfig(node_labels="zone=b,rack=7", node_name="gpu-1"), lambda: api_client
    )
    assert labels.current() == {"zone": "b", "rack": "7"}
    assert labels.refresh() is True
    assert labels.current() == {"zone": "a", "rack": "7", "gpu": "yes"}
    assert labels.refresh() is False  # the same labels again
    core = kubernetes.client.CoreV1Api(api_client)
    core.patch_node("gpu-1", {"metadata": {"labels": {"gpu": None}}})
    assert labels.refresh() is True and "gpu" not in labels.current()


def test_a_failed_read_keeps_the_last_labels(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(_node({"gpu": "yes"}))
    labels = NodeLabels(TuneConfig(node_name="gpu-1"), lambda: api_client)
    labels.refresh()
    apiserver.stop()
    assert labels.refresh() is False
    assert labels.current() == {"gpu": "yes"}


def test_without_a_node_name_the_api_is_never_asked() -> None:
    def refuse() -> kubernetes.client.ApiClient:
        raise AssertionError("the API was asked")

    labels = NodeLabels(TuneConfig(node_labels="gpu=yes"), refuse)
    assert labels.refresh() is False and labels.current() == {"gpu": "yes"}


def test_malformed_configured_labels_are_a_config_error() -> None:
    with pytest.raises(errors.ConfigError, match="a label as name=value"):
        NodeLabels(TuneConfig(node_labels="gpu"), None)
