"""The Prometheus Operator's ServiceMonitor and PodMonitor (monitoring.coreos.com/v1), which
kubernetes-validate has no schema for: a JSON schema of the part of them Lens's manifests use,
and the CustomResourceDefinitions that make the API emulator serve them.

The schema is written from the operator's API reference (its CRDs' openAPIV3Schema, release of
2026-08): field names and types, the required `selector` (and `endpoints` of a ServiceMonitor),
the pattern of a duration. Fields beyond those Lens uses are refused (additionalProperties), so
a misspelt field fails here as the API server's structural-schema pruning would silently drop
it there.
"""

from __future__ import annotations

from typing import Any

GROUP = "monitoring.coreos.com"
KINDS = {"ServiceMonitor": "servicemonitors", "PodMonitor": "podmonitors"}

# The operator's Duration: "30s", "1m30s", "500ms", or 0.
DURATION = (
    "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
)
LABEL_NAME = "^[a-zA-Z_][a-zA-Z0-9_]*$"

_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_SELECTOR = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": _STRINGS,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
_RELABELING = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "action": {"type": "string"},
        "regex": {"type": "string"},
        "replacement": {"type": "string"},
        "separator": {"type": "string"},
        "sourceLabels": {"type": "array", "items": {"type": "string", "pattern": LABEL_NAME}},
        "targetLabel": {"type": "string"},
    },
}
_ENDPOINT = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "port": {"type": "string"},
        "path": {"type": "string"},
        "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
        "interval": {"type": "string", "pattern": DURATION},
        "scrapeTimeout": {"type": "string", "pattern": DURATION},
        "honorLabels": {"type": "boolean"},
        "relabelings": {"type": "array", "items": _RELABELING},
        "metricRelabelings": {"type": "array", "items": _RELABELING},
    },
}
_METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": _STRINGS,
        "annotations": _STRINGS,
    },
}


def _monitor(kind: str, endpoints: str, required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": f"{GROUP}/v1"},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "required": required,
                "properties": {
                    "selector": _SELECTOR,
                    "namespaceSelector": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "any": {"type": "boolean"},
                            "matchNames": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "jobLabel": {"type": "string"},
                    endpoints: {"type": "array", "items": _ENDPOINT},
                },
            },
        },
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "ServiceMonitor": _monitor("ServiceMonitor", "endpoints", ["endpoints", "selector"]),
    "PodMonitor": _monitor("PodMonitor", "podMetricsEndpoints", ["selector"]),
}


def definitions() -> list[dict[str, Any]]:
    """The two CRDs, as much of them as the emulator needs to serve the kinds."""
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {
                "group": GROUP,
                "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
        for kind, plural in KINDS.items()
    ]
