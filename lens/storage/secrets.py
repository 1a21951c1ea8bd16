"""Secrets as the storage jobs see them: a reference (NAMESPACE/NAME), the data one read found,
and the seam they are read and written through. lens/roles/jobs/kubestorage.py implements the
seam against the Kubernetes API; the scan (scanning.py) and the gathering (gathering.py) use it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Mapping
from typing import Protocol

from lens.runtime import errors


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, order=True)
class SecretRef:
    """A Secret's place. A reference is all the `storage` table keeps of a Secret."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> SecretRef:
        """From NAMESPACE/NAME (a setting checked at load, config.kube.check_object_ref)."""
        namespace, _, name = text.partition("/")
        return cls(namespace=namespace, name=name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def templated(self) -> bool:
        """Whether the CSI provisioner fills it in per volume (`${pvc.namespace}`): no one
        Secret to read."""
        return "${" in self.namespace or "${" in self.name

    def to_json(self) -> dict[str, str]:
        # The original's keys (its Go struct's field names), which its readers expect.
        return {"Namespace": self.namespace, "Name": self.name}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SecretData:
    """What one read of a Secret found: its data, base64-encoded as the API holds it."""

    data: Mapping[str, str]
    resource_version: str = ""


class Secrets(Protocol):
    """The Secrets of one cluster. Each call raises a LensError (KubeError, SourceError) when the
    API did not answer as expected; a Secret that does not exist is no error."""

    def read(self, ref: SecretRef) -> SecretData | None:
        """The Secret's data; None when it does not exist."""
        ...

    def create(self, ref: SecretRef, data: Mapping[str, str]) -> None:
        """Create the Secret (type Opaque) holding `data` (base64 values)."""
        ...

    def replace(self, ref: SecretRef, data: Mapping[str, str], *, previous: SecretData) -> None:
        """Make `data` the Secret's data (keys of `previous` not in it removed), if the Secret
        is still as `previous` was read (else Conflict)."""
        ...


def parse_secret(document: object, ref: SecretRef) -> SecretData:
    """A Secret object of the API as SecretData; SourceError when it is not shaped as one."""
    if not isinstance(document, dict):
        raise errors.SourceError(f"secret {ref}: the answer is no object")
    metadata = document.get("metadata")
    version = metadata.get("resourceVersion", "") if isinstance(metadata, dict) else ""
    data = document.get("data") or {}
    if not isinstance(data, dict) or not isinstance(version, str):
        raise errors.SourceError(f"secret {ref}: data or metadata.resourceVersion malformed")
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise errors.SourceError(f"secret {ref}: data holds a value that is no text")
    return SecretData(data=dict(data), resource_version=version)


def decode_text(value: str, *, what: str) -> str:
    """A Secret's base64 value as UTF-8 text; SourceError naming `what` when it is none."""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        # UnicodeDecodeError is a ValueError; b64decode raises binascii.Error, also one.
        raise errors.SourceError(f"{what} is not base64-encoded UTF-8 text") from exc


def encode_text(text: str) -> str:
    """Text as a Secret's base64 value."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")
