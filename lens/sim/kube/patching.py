"""The three patch formats of the API server: JSON merge, strategic merge and JSON patch.

JSON merge patch follows RFC 7386 and JSON patch RFC 6902. Strategic merge covers the list
fields Lens and its tests patch (k8s.io/api patchStrategy/patchMergeKey tags): containers,
volumes, env, ports, conditions, addresses, ownerReferences by key; finalizers as a set; and the
`$patch`, `$deleteFromPrimitiveList/` and `$setElementOrder/` directives. Other lists replace,
as the API server does for fields without a strategy. store.py applies them; a bad patch is a
PatchError, which the server answers with 422.
"""

from __future__ import annotations

import copy
from typing import Any

JsonObject = dict[str, Any]


class PatchError(ValueError):
    """The patch cannot be applied to the object."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# Field name -> merge key ("" merges a list of primitives as a set).
_MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "env": "name",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "finalizers": "",
}

_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Kubernetes strategic merge patch for the fields listed in _MERGE_KEYS."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key == "$patch" or key.startswith(_SET_ORDER) or key == "$retainKeys":
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE) :]
            if not isinstance(value, list):
                raise PatchError(f"{key} takes a list")
            result[field] = [v for v in result.get(field) or [] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in _MERGE_KEYS:
            result[key] = _merge_list(result.get(key) or [], value, _MERGE_KEYS[key], key)
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    return result


def _merge_list(current: list[Any], patch: list[Any], merge_key: str, field: str) -> list[Any]:
    if not merge_key:
        merged = list(current)
        for item in patch:
            if item not in merged:
                merged.append(copy.deepcopy(item))
        return merged
    merged = [copy.deepcopy(item) for item in current]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError(f"{field}: every element needs its merge key {merge_key!r}")
        position = next(
            (
                i
                for i, old in enumerate(merged)
                if isinstance(old, dict) and old.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if position is not None:
                del merged[position]
        elif position is None:
            merged.append({k: copy.deepcopy(v) for k, v in item.items() if k != "$patch"})
        else:
            merged[position] = strategic_merge_patch(merged[position], item)
    return merged


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy, test, applied in order to a copy."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch is a list of operations")
    document = copy.deepcopy(target)
    for operation in operations:
        document = _apply_operation(document, operation)
    return document


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(f"invalid JSON pointer {path!r}")
    if path == "":
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(document: Any, parts: list[str]) -> Any:
    node = document
    for part in parts[:-1]:
        node = _child(node, part)
    return node


def _child(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        if part not in node:
            raise PatchError(f"path element {part!r} does not exist")
        return node[part]
    if isinstance(node, list):
        return node[_index(node, part, allow_end=False)]
    raise PatchError(f"cannot descend into {type(node).__name__} at {part!r}")


def _index(node: list[Any], part: str, *, allow_end: bool) -> int:
    if allow_end and part == "-":
        return len(node)
    if not part.isdigit() or (len(part) > 1 and part.startswith("0")):
        raise PatchError(f"invalid array index {part!r}")
    index = int(part)
    if index > len(node) or (index == len(node) and not allow_end):
        raise PatchError(f"array index {index} out of range")
    return index


def _get(document: Any, path: Any) -> Any:
    node = document
    for part in _pointer(path):
        node = _child(node, part)
    return node


def _add(document: Any, path: Any, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return copy.deepcopy(value)
    parent = _parent(document, parts)
    if isinstance(parent, dict):
        parent[parts[-1]] = copy.deepcopy(value)
    elif isinstance(parent, list):
        parent.insert(_index(parent, parts[-1], allow_end=True), copy.deepcopy(value))
    else:
        raise PatchError(f"cannot add to {type(parent).__name__}")
    return document


def _remove(document: Any, path: Any) -> tuple[Any, Any]:
    parts = _pointer(path)
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _parent(document, parts)
    if isinstance(parent, dict):
        if parts[-1] not in parent:
            raise PatchError(f"cannot remove missing {path!r}")
        return document, parent.pop(parts[-1])
    if isinstance(parent, list):
        return document, parent.pop(_index(parent, parts[-1], allow_end=False))
    raise PatchError(f"cannot remove from {type(parent).__name__}")


def _apply_operation(document: Any, operation: Any) -> Any:
    if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
        raise PatchError(f"invalid operation {operation!r}")
    op, path = operation["op"], operation["path"]
    if op == "add":
        return _add(document, path, _value(operation))
    if op == "remove":
        return _remove(document, path)[0]
    if op == "replace":
        _get(document, path)
        document, _ = _remove(document, path) if _pointer(path) else (document, None)
        return _add(document, path, _value(operation))
    if op in ("move", "copy"):
        value = _get(document, operation.get("from"))
        if op == "move":
            document, value = _remove(document, operation["from"])
        return _add(document, path, value)
    if op == "test":
        if _get(document, path) != _value(operation):
            raise PatchError(f"test operation failed at {path!r}")
        return document
    raise PatchError(f"unknown operation {op!r}")


def _value(operation: dict[str, Any]) -> Any:
    if "value" not in operation:
        raise PatchError(f"operation {operation['op']!r} needs a value")
    return operation["value"]
