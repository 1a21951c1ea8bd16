"""A rendered container as the kubelet would start it, without a cluster: its environment (values
with `$(VAR)` references expanded, the pod's fields, the Secrets' keys), its volumes laid out
under a temporary directory (the ConfigMap's files as rendered, sample Secret files, empty
directories), and the Lens config that environment and those files give, loaded by Lens's own
loader (lens/runtime/config/loading.py: an unknown key or a bad value is a ConfigError there).

Expansion follows the Kubernetes API reference (EnvVar.value): `$(VAR)` is replaced by a variable
defined earlier in the list; a reference to anything else stays as written; `$$` is a `$`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from lens.runtime import config as lens_config
from lens.runtime.config import Config

Document = dict[str, Any]

# What the pod's own fields give (metadata.namespace comes from the object).
POD_NAME = "lens-pod-0"
NODE_NAME = "gpu-node-1"
HOST_IP = "10.0.0.7"

# Every Secret key the manifests may name, with a value of the shape docs/deploy.md asks for;
# a reference to any other key fails the test that finds it, so this is the Secrets' contract.
SECRET_SAMPLES: Mapping[tuple[str, str], str] = {
    ("lens-database", "url"): "postgresql://lens@postgres.databases.svc:5432/lens",
    ("lens-database", "password"): "database password",
    ("lens-events-token", "token"): "events token",
    ("lens-api-tokens", "token-digests"): "0" * 64 + "\n",
    ("lens-jobs-tls", "tls.crt"): "-----BEGIN CERTIFICATE-----\n",
    ("lens-jobs-tls", "tls.key"): "-----BEGIN PRIVATE KEY-----\n",
    ("lens-central", "address"): "lens-events.example.com:8991",
    ("lens-central", "token"): "events token",
    ("lens-central", "ca.crt"): "-----BEGIN CERTIFICATE-----\n",
}
# Where every pod finds its service account's token (automountServiceAccountToken).
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class PodError(AssertionError):
    """The container could not be started as written (a test failure naming why)."""


def expand(value: str, known: Mapping[str, str]) -> str:
    """`value` with `$(VAR)` of earlier variables replaced and `$$` made `$`."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        return known.get(name, match.group(0))

    return _REFERENCE.sub(replace, value)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Mount:
    path: str  # inside the container
    volume: Mapping[str, Any]
    read_only: bool

    @property
    def kind(self) -> str:
        """configMap, secret, emptyDir, hostPath, ..."""
        return next(k for k in self.volume if k != "name")

    def holds(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path.rstrip("/") + "/")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    """One container of a rendered workload, with its pod's volumes and the overlay's objects."""

    workload: Document
    spec: Mapping[str, Any]  # the pod spec
    body: Mapping[str, Any]  # the container
    documents: Sequence[Document]

    @property
    def namespace(self) -> str:
        return str(self.workload["metadata"].get("namespace") or "")

    @property
    def label(self) -> str:
        return f"{self.workload['kind']}/{self.workload['metadata']['name']}:{self.body['name']}"

    def mounts(self) -> list[Mount]:
        volumes = {v["name"]: v for v in self.spec.get("volumes") or []}
        found = []
        for mount in self.body.get("volumeMounts") or []:
            if mount["name"] not in volumes:
                raise PodError(f"{self.label}: mounts volume {mount['name']!r}, not in the pod")
            found.append(
                Mount(
                    path=str(mount["mountPath"]),
                    volume=volumes[mount["name"]],
                    read_only=bool(mount.get("readOnly")),
                )
            )
        return found

    def mount_of(self, path: str) -> Mount | None:
        """The innermost mount that holds `path`."""
        holding = [m for m in self.mounts() if m.holds(path)]
        return max(holding, key=lambda m: len(m.path)) if holding else None

    def environment(self) -> dict[str, str]:
        """The variables as the kubelet sets them, in order, expanded."""
        known: dict[str, str] = {}
        for variable in self.body.get("env") or []:
            value = self._value(variable, known)
            if value is not None:
                known[variable["name"]] = value
        return known

    def _value(self, variable: Mapping[str, Any], known: Mapping[str, str]) -> str | None:
        if "value" in variable:
            return expand(str(variable["value"]), known)
        source = variable.get("valueFrom") or {}
        if "fieldRef" in source:
            fields = {
                "metadata.namespace": self.namespace,
                "metadata.name": POD_NAME,
                "spec.nodeName": NODE_NAME,
                "status.hostIP": HOST_IP,
            }
            path = source["fieldRef"]["fieldPath"]
            if path not in fields:
                raise PodError(f"{self.label}: field {path} is not simulated here")
            return fields[path]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            return secret_value(ref["name"], ref["key"], self.label)
        raise PodError(f"{self.label}: {variable['name']} comes from {sorted(source)}")

    def config_map_data(self, name: str) -> Mapping[str, str]:
        for document in self.documents:
            if document["kind"] == "ConfigMap" and document["metadata"]["name"] == name:
                return dict(document.get("data") or {})
        raise PodError(f"{self.label}: ConfigMap {name!r} is not among the rendered objects")


def secret_value(name: str, key: str, where: str) -> str:
    if (name, key) not in SECRET_SAMPLES:
        raise PodError(f"{where}: Secret {name} key {key} is not in the documented Secrets")
    return SECRET_SAMPLES[(name, key)]


def containers(documents: Sequence[Document]) -> list[Container]:
    """Every container of every Deployment and DaemonSet rendered."""
    found = []
    for document in documents:
        if document["kind"] not in ("Deployment", "DaemonSet"):
            continue
        spec = document["spec"]["template"]["spec"]
        for body in spec.get("containers") or []:
            found.append(Container(workload=document, spec=spec, body=body, documents=documents))
    return found


class PodFiles:
    """The container's file system under `root`: every volume where it is mounted."""

    def __init__(self, container: Container, root: Path) -> None:
        self.container = container
        self.root = root
        for mount in container.mounts():
            self._lay_out(mount)
        if container.spec.get("automountServiceAccountToken", True):
            directory = self.at(SERVICE_ACCOUNT_DIR)
            directory.mkdir(parents=True, exist_ok=True)
            for name in ("token", "ca.crt", "namespace"):
                (directory / name).write_text(f"projected {name}\n")

    def at(self, path: str) -> Path:
        """Where the container's absolute `path` lies here."""
        return self.root / path.lstrip("/")

    def _lay_out(self, mount: Mount) -> None:
        directory = self.at(mount.path)
        directory.mkdir(parents=True, exist_ok=True)
        volume = mount.volume
        if "configMap" in volume:
            data = self.container.config_map_data(volume["configMap"]["name"])
            items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
            for item in items:
                (directory / item["path"]).write_text(self.relocate_text(data[item["key"]]))
        elif "secret" in volume:
            name = volume["secret"]["secretName"]
            items = volume["secret"].get("items")
            if not items:
                raise PodError(f"{self.container.label}: Secret {name} mounted without items")
            for item in items:
                value = secret_value(name, item["key"], self.container.label)
                (directory / item["path"]).write_text(value)

    def relocate(self, value: str) -> str:
        """A container path as it lies here, when a mount holds it; other text unchanged."""
        if value.startswith("/") and self.container.mount_of(value) is not None:
            return str(self.at(value))
        return value

    def inside(self, value: str) -> str:
        """The container's own path of a relocated one (other text unchanged)."""
        prefix = str(self.root)
        if value.startswith(prefix + "/"):
            return value[len(prefix) :]
        return value

    def relocate_text(self, text: str) -> str:
        """A config file's YAML with each string that names a mounted path relocated."""
        data = yaml.safe_load(text)
        return yaml.safe_dump(_map_strings(data, self.relocate), sort_keys=False)

    def load_config(self, config_path: str) -> Config:
        """The config the role would run with: --config's file and the environment."""
        environ = {k: self.relocate(v) for k, v in self.container.environment().items()}
        environ["HOME"] = str(self.at("/tmp"))
        return lens_config.load(str(self.at(config_path)), environ=environ)


def _map_strings(data: object, change: Any) -> object:
    if isinstance(data, str):
        return change(data)
    if isinstance(data, list):
        return [_map_strings(item, change) for item in data]
    if isinstance(data, dict):
        return {key: _map_strings(value, change) for key, value in data.items()}
    return data
