"""What the API server does to an object on the way in: names, defaults, status handling.

Pure functions over JSON dicts, used by store.py for create and update: validate the name,
fill uid/creationTimestamp/generation, reset status where the real registry strategy does, and
compute pod QoS classes the way pkg/apis/core/helper/qos does.
"""

from __future__ import annotations

import datetime
import random
import re
import string
import uuid
from typing import Any

from lens.sim.kube.resources import ResourceType
from lens.sim.kube.status import ApiError, bad_request, invalid

JsonObject = dict[str, Any]

_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# Kinds whose registry strategy clears status on create (status comes through /status later).
_STATUS_KEPT_ON_CREATE = {"Node", "CustomResourceDefinition"}
# Kinds named by a DNS label rather than a DNS subdomain.
_LABEL_NAMED = {"Namespace", "Service"}


def timestamp(epoch_seconds: float) -> str:
    """RFC 3339 in UTC with second precision, as metadata timestamps are."""
    moment = datetime.datetime.fromtimestamp(int(epoch_seconds), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def check_name(rtype: ResourceType, name: str) -> None:
    pattern, limit = (_LABEL_RE, 63) if rtype.kind in _LABEL_NAMED else (_SUBDOMAIN_RE, 253)
    if not name or len(name) > limit or not pattern.match(name):
        raise invalid(
            rtype.kind,
            name,
            f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 "
            f"{'label' if limit == 63 else 'subdomain'} must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character",
        )


def check_envelope(rtype: ResourceType, body: Any) -> JsonObject:
    """The body as an object of this type, or 400 when it is not one."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    kind = body.get("kind", rtype.kind)
    api_version = body.get("apiVersion", rtype.api_version)
    if kind != rtype.kind or api_version != rtype.api_version:
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({rtype.api_version}) or kind ({kind} is not {rtype.kind})"
        )
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise bad_request("metadata must be an object")
    return {
        **body,
        "kind": rtype.kind,
        "apiVersion": rtype.api_version,
        "metadata": dict(metadata or {}),
    }


def _generated_name(prefix: str, rng: random.Random) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"  # the API server's, without vowels and look-alikes
    return prefix + "".join(rng.choice(alphabet) for _ in range(5))


def prepare_create(
    rtype: ResourceType,
    body: JsonObject,
    *,
    namespace: str | None,
    now: float,
    rng: random.Random,
    keep_status: bool,
) -> JsonObject:
    """The object as stored by a create: named, stamped, defaulted (without resourceVersion)."""
    obj = dict(body)
    metadata = dict(obj["metadata"])
    if metadata.get("resourceVersion"):
        raise bad_request("resourceVersion should not be set on objects to be created")
    if not metadata.get("name"):
        prefix = metadata.get("generateName")
        if not prefix:
            raise invalid(
                rtype.kind, "", "metadata.name: Required value: name or generateName is required"
            )
        metadata["name"] = _generated_name(prefix, rng)
    check_name(rtype, metadata["name"])
    if rtype.namespaced:
        body_namespace = metadata.get("namespace")
        if body_namespace and body_namespace != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request"
            )
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)
    metadata["uid"] = new_uid(rng)
    metadata["creationTimestamp"] = timestamp(now)
    metadata.pop("deletionTimestamp", None)
    if "spec" in obj:
        metadata["generation"] = 1
    obj["metadata"] = metadata
    _default_status(rtype, obj, keep_status=keep_status)
    return obj


def _default_status(rtype: ResourceType, obj: JsonObject, *, keep_status: bool) -> None:
    if rtype.status and not keep_status and rtype.kind not in _STATUS_KEPT_ON_CREATE:
        obj.pop("status", None)
    if rtype.kind == "Pod":
        status = dict(obj.get("status") or {})
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", pod_qos(obj.get("spec") or {}))
        obj["status"] = status
        spec = dict(obj.get("spec") or {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("schedulerName", "default-scheduler")
        obj["spec"] = spec
    elif rtype.kind == "Namespace":
        obj["status"] = {"phase": "Active", **(obj.get("status") or {})}


def pod_qos(spec: JsonObject) -> str:
    """Guaranteed, Burstable or BestEffort, by the requests and limits of cpu and memory."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        own_requests = {
            k: str(v)
            for k, v in (resources.get("requests") or {}).items()
            if k in ("cpu", "memory")
        }
        own_limits = {
            k: str(v) for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")
        }
        requests.update(own_requests)
        limits.update(own_limits)
        effective_requests = {**own_limits, **own_requests}
        if set(own_limits) != {"cpu", "memory"} or effective_requests != own_limits:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def spec_changed(old: JsonObject, new: JsonObject) -> bool:
    """Whether an update changes what bumps metadata.generation (everything but metadata/status)."""
    ignored = {"metadata", "status"}
    return {k: v for k, v in old.items() if k not in ignored} != {
        k: v for k, v in new.items() if k not in ignored
    }


def check_update_identity(rtype: ResourceType, current: JsonObject, body: JsonObject) -> None:
    new_meta, old_meta = body.get("metadata") or {}, current["metadata"]
    if new_meta.get("name", old_meta["name"]) != old_meta["name"]:
        raise bad_request("the name of the object does not match the name on the URL")
    if new_meta.get("uid") and new_meta["uid"] != old_meta["uid"]:
        raise ApiError(
            409,
            "Conflict",
            f"Precondition failed: UID in precondition: {new_meta['uid']}, "
            f"UID in object meta: {old_meta['uid']}",
        )


def random_suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(length))
