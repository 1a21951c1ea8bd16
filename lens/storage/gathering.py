"""Every cluster's storage-config Secret gathered into one aggregate Secret of the home cluster
(REFERENCE.md 13), in the shape multicluster.py declares. lens/roles/jobs/multistorage.py runs
it on the leader, with the clusters of controller.clusters_secret.

A cluster that cannot be read is skipped, and one log line names each such cluster with its
reason; its last gathered entry stays in the aggregate until it is read again, unless its
storage-config Secret no longer exists. When no cluster could be read nothing is written. The
aggregate is created when missing and updated only when its content differs.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Literal

from lens.runtime import errors
from lens.storage import multicluster
from lens.storage.multicluster import ClusterStorageConfig
from lens.storage.secrets import SecretData, SecretRef, Secrets

log = logging.getLogger(__name__)

Written = Literal["created", "updated", "unchanged", "nothing"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterTarget:
    """A cluster to gather from: its Secrets, or why it cannot be reached."""

    name: str
    secrets: Secrets | None
    problem: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GatherOutcome:
    gathered: tuple[str, ...]
    failed: Mapping[str, str]  # cluster -> reason
    written: Written


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Failure:
    reason: str
    keep: bool  # whether the cluster's last entry stays in the aggregate


class Gathering:
    """The gathering's body; one run at a time."""

    def __init__(
        self, *, home: Secrets, config_secret: SecretRef, aggregate_secret: SecretRef
    ) -> None:
        self._home = home
        self._config_secret = config_secret
        self._aggregate_secret = aggregate_secret
        self._logged: Mapping[str, str] | None = None  # the failures last logged

    def run(self, targets: Sequence[ClusterTarget]) -> GatherOutcome:
        read: dict[str, ClusterStorageConfig] = {}
        failures: dict[str, _Failure] = {}
        for target in targets:
            found = self._read(target)
            if isinstance(found, _Failure):
                failures[target.name] = found
            else:
                read[target.name] = found
        failed = {name: failure.reason for name, failure in sorted(failures.items())}
        self._log(failed, any_read=bool(read))
        if not read:
            return GatherOutcome(gathered=(), failed=failed, written="nothing")
        written = self._write(read, failures)
        return GatherOutcome(gathered=tuple(sorted(read)), failed=failed, written=written)

    def _read(self, target: ClusterTarget) -> ClusterStorageConfig | _Failure:
        if target.secrets is None:
            return _Failure(reason=target.problem, keep=True)
        try:
            secret = target.secrets.read(self._config_secret)
            if secret is None:
                return _Failure(reason=f"secret {self._config_secret} not found", keep=False)
            return multicluster.parse_storage_config(target.name, secret)
        except errors.LensError as exc:
            return _Failure(reason=str(exc), keep=True)

    def _write(
        self, read: Mapping[str, ClusterStorageConfig], failures: Mapping[str, _Failure]
    ) -> Written:
        current = self._home.read(self._aggregate_secret)
        before = self._before(current)
        kept = {name: before[name] for name, f in failures.items() if f.keep and name in before}
        configs = {**kept, **read}
        if current is not None and before == configs:
            return "unchanged"
        data = multicluster.render_aggregate(configs)
        if current is None:
            self._home.create(self._aggregate_secret, data)
            log.info("multi-cluster storage config created", extra={"clusters": sorted(configs)})
            return "created"
        self._home.replace(self._aggregate_secret, data, previous=current)
        log.info("multi-cluster storage config updated", extra={"clusters": sorted(configs)})
        return "updated"

    def _before(self, current: SecretData | None) -> dict[str, ClusterStorageConfig]:
        if current is None:
            return {}
        try:
            return multicluster.parse_aggregate(current)
        except errors.SourceError as exc:
            log.warning(
                "the multi-cluster storage config is malformed; it is written anew",
                extra={"secret": str(self._aggregate_secret), "reason": str(exc)},
            )
            return {}

    def _log(self, failed: Mapping[str, str], *, any_read: bool) -> None:
        """One line when the clusters failing, or their reasons, change; none per run."""
        if failed == self._logged:
            return
        if failed and not any_read:
            log.error(
                "no cluster's storage config could be read; nothing written",
                extra={"clusters": dict(failed)},
            )
        elif failed:
            log.warning(
                "storage config not gathered from clusters", extra={"clusters": dict(failed)}
            )
        elif self._logged:
            log.info("storage config gathered from every cluster again")
        self._logged = dict(failed)
