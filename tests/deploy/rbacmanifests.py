"""The deployment as rendered: every overlay through `kubectl kustomize`, the RBAC files' own
text (the `# why:` comments a rendering drops), and the settings each Deployment gives a role
(its config file and LENS_* environment), for tests/deploy/test_rbac.py."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import yaml

from tests.deploy.rendering import KUSTOMIZE, ROOT, Document

RBAC_DIR = KUSTOMIZE / "base" / "rbac"
RBAC_FILES = (
    "controller.yaml",
    "jobs.yaml",
    "api.yaml",
    "node-agent.yaml",
    "tune.yaml",
    "netflow.yaml",
)
WHY = "# why:"
POD_NAME = "lens-pod-0"  # what a pod's metadata.name gives the environment here


def namespace_of(documents: list[Document], service_account: str) -> str | None:
    for document in documents:
        meta = document.get("metadata") or {}
        if document.get("kind") == "ServiceAccount" and meta.get("name") == service_account:
            return str(meta.get("namespace") or "")
    return None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SourceRule:
    """A rule as written in base/rbac: its text and whether a `# why:` comment justifies it."""

    kind: str
    name: str
    index: int
    rule: Mapping[str, Any]
    why: str  # the comment's text, "" when there is none
    where: str  # file:line


def source_rules() -> dict[tuple[str, str, int], SourceRule]:
    """Every rule of the RBAC files by (kind, name, index), with its `# why:` comment."""
    found: dict[tuple[str, str, int], SourceRule] = {}
    for file_name in RBAC_FILES:
        path = RBAC_DIR / file_name
        text = path.read_text()
        lines = text.splitlines()
        for node in yaml.compose_all(text):
            document = yaml.safe_load(yaml.serialize(node)) if node is not None else None
            if not document or document.get("kind") not in ("Role", "ClusterRole"):
                continue
            rules_node = _value_node(node, "rules")
            if rules_node is None:
                continue
            name = document["metadata"]["name"]
            for index, item in enumerate(rules_node.value):
                line = item.start_mark.line
                found[(document["kind"], name, index)] = SourceRule(
                    kind=document["kind"],
                    name=name,
                    index=index,
                    rule=document["rules"][index],
                    why=_why_above(lines, line),
                    where=f"{path.relative_to(ROOT)}:{line + 1}",
                )
    return found


def _value_node(mapping: yaml.Node, key: str) -> yaml.SequenceNode | None:
    for key_node, value_node in mapping.value:
        if key_node.value == key and isinstance(value_node, yaml.SequenceNode):
            return value_node
    return None


def _why_above(lines: list[str], line: int) -> str:
    """The `# why:` comment in the block of comment lines right above `line`, if any."""
    block: list[str] = []
    at = line - 1
    while at >= 0 and lines[at].strip().startswith("#"):
        block.insert(0, lines[at].strip())
        at -= 1
    for offset, comment in enumerate(block):
        if comment.startswith(WHY):
            rest = [c.lstrip("#").strip() for c in block[offset + 1 :]]
            return " ".join([comment[len(WHY) :].strip(), *rest]).strip()
    return ""


_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def deployment_settings(
    documents: list[Document], deployment: str, namespace: str
) -> dict[str, object]:
    """The settings ("section.key") a Deployment's first container is given: its config file
    (the ConfigMap it mounts, named by --config) overlaid by its literal LENS_* environment,
    with $(VAR) references to earlier variables and the pod's fields expanded."""
    found = [
        d
        for d in documents
        if d.get("kind") == "Deployment" and d["metadata"]["name"] == deployment
    ]
    if not found:
        return {}
    spec = found[0]["spec"]["template"]["spec"]
    container = spec["containers"][0]
    settings = _flatten(_config_file(documents, spec, container))
    variables: dict[str, str] = {}
    for variable in container.get("env") or []:
        value = _env_value(variable, namespace, variables)
        if value is None:
            continue
        variables[variable["name"]] = value
        name = variable["name"]
        if name.startswith("LENS_") and "__" in name:
            section, key = name[len("LENS_") :].lower().split("__", 1)
            settings[f"{section}.{key}"] = value
    return settings


def _env_value(variable: Mapping[str, Any], namespace: str, known: dict[str, str]) -> str | None:
    if "value" in variable:
        return _REFERENCE.sub(lambda m: known.get(m.group(1), m.group(0)), str(variable["value"]))
    field = ((variable.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
    return {"metadata.namespace": namespace, "metadata.name": POD_NAME}.get(str(field))


def _config_file(
    documents: list[Document], spec: Mapping[str, Any], container: Mapping[str, Any]
) -> dict[str, Any]:
    """The YAML of the file --config names, from the ConfigMap mounted where it lies."""
    args = [str(a) for a in container.get("args") or []]
    if "--config" not in args:
        return {}
    path = args[args.index("--config") + 1]
    for mount in container.get("volumeMounts") or []:
        directory = str(mount["mountPath"]).rstrip("/") + "/"
        if not path.startswith(directory):
            continue
        volume = next(v for v in spec.get("volumes") or [] if v["name"] == mount["name"])
        config_map = (volume.get("configMap") or {}).get("name")
        key = path[len(directory) :]
        for document in documents:
            if document.get("kind") == "ConfigMap" and document["metadata"]["name"] == config_map:
                return yaml.safe_load(document["data"][key]) or {}
    return {}


def _flatten(config: Mapping[str, Any]) -> dict[str, object]:
    return {
        f"{section}.{key}": value
        for section, values in config.items()
        if isinstance(values, dict)
        for key, value in values.items()
    }
