"""Clients from each kube source, against an API emulator that wants a bearer token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import clients
from lens.runtime import errors
from lens.runtime.config import KubeConfig
from lens.sim.kube.server import KubeApiServer

TOKEN = "sim-token-1"


@pytest.fixture
def guarded() -> Iterator[KubeApiServer]:
    server = KubeApiServer(token=TOKEN).start()
    yield server
    server.stop()


def _namespaces(api: kubernetes.client.ApiClient) -> list[str]:
    with api:
        listed = kubernetes.client.CoreV1Api(api).list_namespace()
    return [n.metadata.name for n in listed.items]


def test_a_kubeconfig_file_and_its_context(guarded: KubeApiServer, tmp_path: Path) -> None:
    path = guarded.write_kubeconfig(tmp_path / "config", context="sim")
    api = clients.connect(KubeConfig(source="kubeconfig", kubeconfig=str(path), context="sim"))
    assert "default" in _namespaces(api)


def test_a_url_with_a_token_file_read_again_when_it_changes(
    guarded: KubeApiServer, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("wrong\n")
    cfg = KubeConfig(source="url", url=guarded.url + "/", token_file=str(token))
    api = clients.connect(cfg)
    with pytest.raises(ApiException) as refused:
        kubernetes.client.CoreV1Api(api).list_namespace()
    assert refused.value.status == 401
    token.write_text(TOKEN + "\n")
    assert "default" in _namespaces(api)


def test_a_kubeconfig_from_a_secret_value(guarded: KubeApiServer, tmp_path: Path) -> None:
    text = guarded.write_kubeconfig(tmp_path / "config").read_text()
    assert "default" in _namespaces(clients.from_kubeconfig_text(text, where="secret x key a"))
    with pytest.raises(errors.SourceError, match="secret x key b: not a usable kubeconfig"):
        clients.from_kubeconfig_text("- just\n- a list\n", where="secret x key b")
    with pytest.raises(errors.SourceError, match="secret x key c"):
        clients.from_kubeconfig_text("apiVersion: v1\nkind: Config\n", where="secret x key c")


def test_what_cannot_connect_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(errors.ConfigError, match=r"kube\.kubeconfig: a usable kubeconfig at"):
        clients.connect(KubeConfig(source="kubeconfig", kubeconfig=str(missing)))
    with pytest.raises(errors.ConfigError, match=r"kube\.url"):
        clients.connect(KubeConfig(source="url"))
    with pytest.raises(errors.ConfigError, match=r"kube\.token_file: a readable file"):
        clients.connect(KubeConfig(source="url", url="https://x", token_file=str(missing)))
    with pytest.raises(errors.ConfigError, match=r"kube\.source: in-cluster credentials"):
        clients.connect(KubeConfig(source="in-cluster"))
