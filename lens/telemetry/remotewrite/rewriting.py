"""The one Rewriter of a process: takes an uncompressed remote-write body of either version,
relabels every series through a Relabeler and answers the body in the version the forwarding
target speaks. 1.0 to 1.0, the path Prometheus 2.x senders take, is v1.py's wire-level fast
path; every other pair goes through the protobuf classes (v2.py)."""

from __future__ import annotations

from lens.telemetry.remotewrite import symbols, v1, v2
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import Relabeler, Rewritten, Version


class Rewriter:
    """Relabels remote-write bodies; safe to use from many threads at once. Label sets it has
    relabelled are cached (at most `max_cached` per cache, one for 1.0 to 1.0 and one for the
    rest) until the Relabeler's generation changes."""

    def __init__(self, relabeler: Relabeler, *, max_cached: int = 200_000) -> None:
        self._relabeler = relabeler
        self._wire: LabelCache[bytes, v1.Entry] = LabelCache(relabeler, max_entries=max_cached)
        self._pairs: LabelCache[symbols.Flat, symbols.Entry] = LabelCache(
            relabeler, max_entries=max_cached
        )

    def rewrite(self, raw: bytes, *, received: Version, to: Version) -> Rewritten:
        """`raw`, a body of version `received`, relabelled into version `to`. BadRequest when
        `raw` is no valid message of that version."""
        if received is Version.V1 and to is Version.V1:
            return v1.rewrite(raw, cache=self._wire, relabeler=self._relabeler)
        if received is Version.V1:
            return v2.upgrade(raw, cache=self._pairs, relabeler=self._relabeler)
        return v2.rewrite(raw, to=to, cache=self._pairs, relabeler=self._relabeler)
