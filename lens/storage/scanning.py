"""One storage scan: the StorageClasses listed once, each JuiceFS volume named from its Secret
(one GET per Secret referenced, nothing of it kept but the name), the volumes' figures queried
once, and the rows written where something changed (rows.py). lens/roles/jobs/storagescan.py
runs it on the leader.

A JuiceFS class whose volume cannot be named (no Secret, a Secret filled in per volume, one
missing, unreadable or without `name`) gets a row named after the class, and one log line says
why. An API that fails mid-scan fails the scan: nothing is written from half a view.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence

from lens.runtime import errors
from lens.storage import classes
from lens.storage.classes import StorageBackend
from lens.storage.rows import StorageRow, StorageRows
from lens.storage.secrets import SecretRef, Secrets
from lens.storage.usage import ABSENT, VolumeUsage

log = logging.getLogger(__name__)

Usage = Mapping[str, VolumeUsage]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult:
    rows: tuple[StorageRow, ...]
    written: int
    usage_read: bool | None  # None: not asked (no query API, or no JuiceFS volume)


class StorageScan:
    """The scan's body; one run at a time."""

    def __init__(
        self,
        *,
        list_classes: Callable[[], object],
        secrets: Secrets,
        read_usage: Callable[[], Usage] | None,
        rows: StorageRows,
    ) -> None:
        self._list_classes = list_classes
        self._secrets = secrets
        self._read_usage = read_usage
        self._rows = rows
        self._problems: dict[str, str] = {}  # storage class -> why its volume has no name
        self._usage_failing = False

    def run(self) -> ScanResult:
        backends = classes.parse_storage_classes(self._list_classes())
        named = self._named(backends)
        wanted = any(b.kind == classes.JUICEFS for b in backends)
        usage, usage_read = self._usage() if wanted else ({}, None)
        rows = tuple(_rows(named, usage))
        return ScanResult(rows=rows, written=self._rows.write(rows), usage_read=usage_read)

    def _named(self, backends: Sequence[StorageBackend]) -> list[tuple[str, StorageBackend]]:
        """Each backend with the name of its row."""
        volumes: dict[SecretRef, str | errors.SourceError] = {}
        named = []
        for backend in backends:
            name = backend.storage_class
            if backend.kind == classes.JUICEFS:
                name = self._volume(backend, volumes)
            named.append((name, backend))
        gone = set(self._problems) - {b.storage_class for b in backends}
        for storage_class in gone:
            del self._problems[storage_class]
        return named

    def _volume(
        self, backend: StorageBackend, volumes: dict[SecretRef, str | errors.SourceError]
    ) -> str:
        ref = backend.meta_secret
        if ref is None:
            return self._unnamed(backend, "it names no provisioner or node-publish Secret")
        if ref.templated:
            return self._unnamed(backend, f"its Secret {ref} is filled in per volume")
        if ref not in volumes:
            volumes[ref] = self._read_volume(ref)
        found = volumes[ref]
        if isinstance(found, errors.SourceError):
            return self._unnamed(backend, str(found))
        if self._problems.pop(backend.storage_class, None) is not None:
            log.info("storage class volume named", extra={"storage_class": backend.storage_class})
        return found

    def _read_volume(self, ref: SecretRef) -> str | errors.SourceError:
        """The volume's name, or why there is none. Other errors (the API failing) end the
        scan."""
        try:
            secret = self._secrets.read(ref)
        except errors.Forbidden as exc:
            return errors.SourceError(f"secret {ref} may not be read: {exc}")
        if secret is None:
            return errors.SourceError(f"secret {ref} does not exist")
        try:
            return classes.juicefs_volume_name(secret, ref)
        except errors.SourceError as exc:
            return exc

    def _unnamed(self, backend: StorageBackend, reason: str) -> str:
        if self._problems.get(backend.storage_class) != reason:
            log.warning(
                "storage class volume not named; its row is named after the class",
                extra={"storage_class": backend.storage_class, "reason": reason},
            )
        self._problems[backend.storage_class] = reason
        return backend.storage_class

    def _usage(self) -> tuple[Usage | None, bool | None]:
        """The volumes' figures ({} without a query API); None when the query failed."""
        if self._read_usage is None:
            return {}, None
        try:
            usage = self._read_usage()
        except errors.LensError as exc:
            if not self._usage_failing:
                log.warning(
                    "storage usage not read; the stored figures stay",
                    extra={"reason": str(exc)},
                )
            self._usage_failing = True
            return None, False
        if self._usage_failing:
            log.info("storage usage read again")
        self._usage_failing = False
        return usage, True


def _rows(named: Sequence[tuple[str, StorageBackend]], usage: Usage | None) -> list[StorageRow]:
    """One row per backend: classes naming the same JuiceFS volume share it."""
    groups: dict[tuple[str, str], list[StorageBackend]] = {}
    for name, backend in named:
        groups.setdefault((backend.kind, name), []).append(backend)
    rows = []
    for (kind, name), members in groups.items():
        figures: VolumeUsage | None = ABSENT
        if kind == classes.JUICEFS:
            figures = None if usage is None else usage.get(name, ABSENT)
        rows.append(
            StorageRow(
                kind=kind,
                name=name,
                backend=members[0],
                storage_classes=tuple(b.storage_class for b in members),
                usage=figures,
            )
        )
    return rows
