"""Leader election on a coordination.k8s.io Lease, as client-go's leaderelection does it.

A replica takes the Lease when it is free or its holder has not renewed it for
`lease_duration` as measured on this replica's own monotonic clock since the record last
changed (clocks of different machines are never compared). The leader renews every
`retry_period`; when it could not renew for `renew_deadline` it stops leading before anyone
else may take over (renew_deadline < lease_duration), so two leaders never write at once.
Writes are optimistic (resourceVersion): of two replicas racing for the Lease one gets a 409.
On stop a leader releases the Lease so that a successor takes over at once.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, resources
from lens.runtime import errors

log = logging.getLogger(__name__)

LEASES = resources.Kind(
    api_version="coordination.k8s.io/v1", kind="Lease", plural="leases", namespaced=True
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LeaseSettings:
    namespace: str
    name: str
    identity: str
    lease_duration: float = 15.0
    setting: str = ""  # the configuration key that names the Lease, for error messages

    @property
    def renew_deadline(self) -> float:
        return self.lease_duration * 2 / 3

    @property
    def retry_period(self) -> float:
        return max(0.05, self.lease_duration / 7.5)


def _micro_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Runs in its own thread; `on_started` and `on_stopped` are called from it."""

    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        settings: LeaseSettings,
        *,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        wall_time: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._settings = settings
        self._on_started = on_started
        self._on_stopped = on_stopped
        self._now = wall_time
        self._monotonic = monotonic
        self._observed: tuple[str, str] | None = None  # (holder, renewTime) last seen
        self._observed_at = 0.0
        self._renewed_at = 0.0
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._problem: str | None = None  # why the last Lease request failed
        self._thread: threading.Thread | None = None

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    def check(self) -> None:
        """Readiness: NoDataError saying why the Lease cannot be read or written, if so."""
        problem = self._problem
        if problem is not None:
            raise errors.NoDataError(problem)

    def wait_leading(self, timeout: float) -> bool:
        return self._leading.wait(timeout)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="leader-election", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        period = self._settings.retry_period
        while not self._stop.is_set():
            acquired = self._try()
            if acquired:
                self._renewed_at = self._monotonic()
                if not self.leading:
                    self._begin()
            elif self.leading and (
                self._monotonic() - self._renewed_at >= self._settings.renew_deadline
            ):
                self._end("could not renew the lease in time")
            self._stop.wait(period)
        if self.leading:
            self._end("stopping")
            self._release()

    def _begin(self) -> None:
        self._leading.set()
        log.info(
            "leading", extra={"lease": self._settings.name, "identity": self._settings.identity}
        )
        self._on_started()

    def _end(self, reason: str) -> None:
        self._leading.clear()
        log.warning("stopped leading", extra={"lease": self._settings.name, "reason": reason})
        self._on_stopped()

    # -- the Lease ----------------------------------------------------------------------

    def _path(self) -> str:
        return LEASES.object_path(self._settings.namespace, self._settings.name)

    def _try(self) -> bool:
        """Take or renew the Lease; True when this replica holds it now."""
        try:
            lease = resources.request_json(self._api, "GET", self._path(), timeout=5.0)
        except ApiException as exc:
            if exc.status != 404:
                return self._failed(exc)
            return self._write("POST", self._record(None))
        except (urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
            return self._failed(exc)
        self._succeeded()
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        observed = (holder, str(spec.get("renewTime") or ""))
        if observed != self._observed:
            self._observed, self._observed_at = observed, self._monotonic()
        duration = float(spec.get("leaseDurationSeconds") or self._settings.lease_duration)
        mine = holder == self._settings.identity
        free = not holder or self._monotonic() - self._observed_at >= duration
        if not mine and not free:
            return False
        return self._write("PUT", self._record(lease))

    def _record(self, lease: dict[str, Any] | None) -> dict[str, Any]:
        now = _micro_time(self._now())
        spec = dict((lease or {}).get("spec") or {})
        if spec.get("holderIdentity") != self._settings.identity:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if lease else 0)
        spec["holderIdentity"] = self._settings.identity
        spec["leaseDurationSeconds"] = max(1, round(self._settings.lease_duration))
        spec["renewTime"] = now
        metadata = dict((lease or {}).get("metadata") or {})
        metadata.update(name=self._settings.name, namespace=self._settings.namespace)
        return {
            "apiVersion": LEASES.api_version,
            "kind": LEASES.kind,
            "metadata": metadata,
            "spec": spec,
        }

    def _write(self, method: str, body: dict[str, Any]) -> bool:
        path = self._path() if method == "PUT" else LEASES.collection_path(self._settings.namespace)
        try:
            written = resources.request_json(self._api, method, path, body=body, timeout=5.0)
        except ApiException as exc:
            if exc.status == 409:  # another replica wrote first
                return False
            return self._failed(exc)
        except (urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
            return self._failed(exc)
        self._succeeded()
        spec = written.get("spec") or {}
        self._observed = (str(spec.get("holderIdentity")), str(spec.get("renewTime")))
        self._observed_at = self._monotonic()
        return True

    def _failed(self, exc: BaseException) -> bool:
        """Note why; logged once per new reason, not every retry."""
        namespace = self._settings.namespace
        if apierrors.is_missing_namespace(exc, namespace):
            where = f" ({self._settings.setting})" if self._settings.setting else ""
            problem = (
                f"cannot take the Lease {namespace}/{self._settings.name}{where}: namespace "
                f"{namespace!r} does not exist; create it (kubectl create namespace {namespace})"
                " or name a Lease in a namespace that exists"
            )
        else:
            problem = f"Lease {namespace}/{self._settings.name}: {apierrors.describe(exc)}"
        if problem != self._problem:
            log.warning("lease request failed", extra={"reason": problem})
        self._problem = problem
        return False

    def _succeeded(self) -> None:
        if self._problem is not None:
            log.info("lease requests answered again", extra={"lease": self._settings.name})
            self._problem = None

    def _release(self) -> None:
        """Hand the Lease back (empty holder) so that a successor need not wait it out."""
        try:
            lease = resources.request_json(self._api, "GET", self._path(), timeout=5.0)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self._settings.identity:
                return
            spec.update(holderIdentity="", leaseDurationSeconds=1)
            resources.request_json(self._api, "PUT", self._path(), body=lease, timeout=5.0)
        except (ApiException, urllib3.exceptions.HTTPError, OSError, errors.SourceError) as exc:
            log.warning("could not release the lease", extra={"reason": apierrors.describe(exc)})
