"""Secrets and StorageClasses in the API emulator, written as an operator would, for the tests of
the storage jobs."""

from __future__ import annotations

import base64

from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.storage.secrets import SecretRef


def put_secret(server: KubeApiServer, ref: SecretRef, texts: dict[str, str]) -> None:
    """Create the Secret, or replace its data."""
    rtype = server.resource("v1", "Secret")
    data = {key: base64.b64encode(text.encode()).decode() for key, text in texts.items()}
    body: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": ref.name, "namespace": ref.namespace},
        "data": data,
    }
    try:
        current = server.store.get(rtype, ref.namespace, ref.name)
    except ApiError:
        server.create(body)
        return
    body["metadata"] = {**current["metadata"]}
    server.store.update(rtype, ref.namespace, ref.name, body)


def storage_class(name: str, provisioner: str, **parameters: str) -> dict[str, object]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "parameters": parameters,
    }
