"""The relabeler the remote-write codec calls: a series' labels in, the same labels with the pod
and top-level workload the series concerns added out (None: unchanged).

A series concerns the pod it names (by uid, or by namespace and name), else the pod holding now
the GPU or RDMA device it names on its node (identity.py says by which labels). It gets `pod`,
`namespace`, `pod_uid`, `workload_kind`, `workload_name`, `workload_uid` and the team label,
each only where the series has no label of that name: a label it has is never changed. With
`rename_like_original`, the series is renamed as the original did (REFERENCE.md 10.1), but once
for its top-level workload rather than once per ancestor, with no label name twice.

Many request threads call `relabel` at once; the index behind it is guarded (index.py).
Callers caching answers read `generation()` before `relabel()`, and drop their cache when it
changes: an answer read after a change of the index is never cached under the old number.
"""

from __future__ import annotations

from lens.telemetry.enrichment import identity
from lens.telemetry.enrichment.identity import Labels
from lens.telemetry.enrichment.index import Attribution
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex

POD, NAMESPACE, POD_UID = "pod", "namespace", "pod_uid"
WORKLOAD_KIND, WORKLOAD_NAME, WORKLOAD_UID = "workload_kind", "workload_name", "workload_uid"
METRIC_NAME = "__name__"
ORIGINAL_POD_NAME = "pod_name"  # the original's label for the pod (no namespace)
ORIGINAL_PREFIX = "workload_"  # the original's metric name prefix


class WorkloadRelabeler:
    """Adds the workload labels of the pod a series concerns, from a SharedIndex kept current
    by loading.IndexLoader."""

    def __init__(self, shared: SharedIndex, settings: EnrichmentSettings) -> None:
        self._shared = shared
        self._team_label = settings.team_label if settings.team_label_key else ""
        self._rename = settings.rename_like_original

    def generation(self) -> int:
        """Changes whenever `relabel` may answer differently."""
        return self._shared.generation

    def relabel(self, labels: Labels) -> Labels | None:
        """The new full label set, sorted by name; None when the series stays as it is."""
        series = identity.parse_series(labels)
        if series is None:
            return None
        found = self._shared.attribute(series)
        if found is None:
            return None
        if self._rename:
            return self._renamed(labels, found)
        return self._enriched(labels, found)

    def _enriched(self, labels: Labels, found: Attribution) -> Labels | None:
        workload = found.workload
        wanted = {
            POD: found.pod_name,
            NAMESPACE: found.namespace,
            POD_UID: found.pod_uid,
            WORKLOAD_KIND: workload.kind if workload else "",
            WORKLOAD_NAME: workload.name if workload else "",
            WORKLOAD_UID: found.top_uid,
        }
        if self._team_label and self._team_label not in wanted:
            wanted[self._team_label] = workload.team if workload else ""
        present = {name for name, _ in labels}
        added = [(n, v) for n, v in wanted.items() if v and n not in present]
        if not added:
            return None
        return tuple(sorted((*labels, *added)))

    def _renamed(self, labels: Labels, found: Attribution) -> Labels | None:
        """The original's series for the pod's top-level workload: none without one."""
        by_name = dict(labels)
        metric = by_name.get(METRIC_NAME)
        if not metric or not found.top_uid:
            return None
        workload_name = found.workload.name if found.workload is not None else ""
        by_name[METRIC_NAME] = ORIGINAL_PREFIX + metric
        for name, value in (
            (ORIGINAL_POD_NAME, found.pod_name),
            (POD_UID, found.pod_uid),
            (WORKLOAD_NAME, workload_name),
            (WORKLOAD_UID, found.top_uid),
        ):
            if value:  # the original's four labels replace the series' own
                by_name[name] = value
        return tuple(sorted(by_name.items()))
