"""The multi-cluster storage config's shape: a cluster's storage-config Secret decoded, and the
aggregate Secret written from every cluster's (gathering.py writes it; readers parse it back with
`parse_aggregate`; docs/storage.md shows it).

The aggregate holds one key per cluster name. Its value (base64, as every Secret value) is one
JSON object of that cluster's storage-config entries, each decoded: an entry whose text is a
JSON object or array is that value, any other text stays a string. For the original's keys:

    east: {"opensearch": {"service": "os", "port": 9200, ...}, "postgres": {...}, ...}

which is what the original's reader parsed; its exporter wrote `{"opensearch": "<base64>"}`
instead, which that reader rejected (REFERENCE.md 15.1 #24).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from lens.runtime import errors, jsontext
from lens.storage import secrets
from lens.storage.secrets import SecretData


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterStorageConfig:
    """One cluster's storage-config entries, decoded (JSON objects and arrays as values)."""

    cluster: str
    entries: Mapping[str, object]


def entry_value(text: str) -> object:
    """An entry's value: the JSON object or array its text holds, else the text itself."""
    try:
        value = jsontext.loads(text)
    except jsontext.JsonError:
        return text
    if not isinstance(value, dict | list) or not _plain(value):
        return text  # "5432" stays text: the reader saw text, not a number
    return value


def _plain(value: object) -> bool:
    """Whether `value` is JSON every reader takes: Python's reader allows NaN and Infinity."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, RecursionError):
        return False
    return True


def parse_storage_config(cluster: str, secret: SecretData) -> ClusterStorageConfig:
    """A cluster's storage-config Secret decoded; SourceError naming the key that is not
    base64-encoded UTF-8 text."""
    entries = {
        key: entry_value(secrets.decode_text(value, what=f"key {key}"))
        for key, value in sorted(secret.data.items())
    }
    return ClusterStorageConfig(cluster=cluster, entries=entries)


def render_aggregate(configs: Mapping[str, ClusterStorageConfig]) -> dict[str, str]:
    """The aggregate Secret's data: one key per cluster, its entries as one JSON object."""
    return {
        cluster: secrets.encode_text(
            json.dumps(
                dict(config.entries),
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
                allow_nan=False,
            )
        )
        for cluster, config in sorted(configs.items())
    }


def parse_aggregate(secret: SecretData) -> dict[str, ClusterStorageConfig]:
    """The aggregate Secret as a reader sees it; SourceError naming the cluster whose value is
    no JSON object."""
    configs = {}
    for cluster, value in secret.data.items():
        what = f"aggregate key {cluster}"
        try:
            entries = jsontext.loads(secrets.decode_text(value, what=what))
        except jsontext.JsonError as exc:
            raise errors.SourceError(f"{what}: {exc}") from exc
        if not isinstance(entries, dict) or not _plain(entries):
            raise errors.SourceError(f"{what}: no JSON object")
        configs[cluster] = ClusterStorageConfig(cluster=cluster, entries=entries)
    return configs
