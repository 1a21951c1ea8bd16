"""JuiceFS capacity and usage from a Prometheus-compatible query API (`metrics.prometheus_url`):
one instant query of the volumes' own series (REFERENCE.md 3.7), its JSON answer parsed into
figures per volume. scanning.py asks once per scan; rows.py stores the figures.

Every JuiceFS mount pod reports its volume's figures; they are averaged per volume (`vol_name`),
as the original's API did.
"""

from __future__ import annotations

import dataclasses
import http.client
import math
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping

from lens.runtime import errors, jsontext
from lens.runtime.config import MetricsConfig

_FIELDS = {
    "juicefs_total_space": "capacity_bytes",
    "juicefs_used_space": "used_bytes",
    "juicefs_total_inodes": "total_inodes",
    "juicefs_used_inodes": "used_inodes",
}
# One query for the four figures of every volume: grouping by __name__ keeps the series apart.
JUICEFS_QUERY = 'avg by (__name__, vol_name) ({__name__=~"' + "|".join(sorted(_FIELDS)) + '"})'
VOLUME_LABEL = "vol_name"

_BIGINT_MAX = 2**63 - 1  # the columns' range
_ERROR_TEXT_LIMIT = 200
_BODY_LIMIT = 64 << 20


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One element of an instant vector."""

    labels: Mapping[str, str]
    value: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VolumeUsage:
    """A volume's figures; None where no series told."""

    capacity_bytes: int | None = None
    used_bytes: int | None = None
    total_inodes: int | None = None
    used_inodes: int | None = None


ABSENT = VolumeUsage()


class PrometheusQueries:
    """Instant queries of one Prometheus-compatible API (Prometheus, VictoriaMetrics, Thanos,
    Mimir: each serves /api/v1/query); safe to share between threads."""

    def __init__(self, config: MetricsConfig) -> None:
        if not config.prometheus_url:
            raise errors.NoDataError("no query API configured (metrics.prometheus_url)")
        self._base = config.prometheus_url.rstrip("/")
        self._timeout = config.query_timeout_seconds
        self._context = ssl.create_default_context() if self._base.startswith("https:") else None

    def query(self, promql: str) -> list[Sample]:
        """The instant vector `promql` evaluates to now; SourceError when there is none."""
        return parse_query_answer(self._get(promql))

    def _get(self, promql: str) -> bytes:
        address = f"{self._base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        request = urllib.request.Request(address, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=self._context) as r:
                return bytes(r.read(_BODY_LIMIT))
        except urllib.error.HTTPError as exc:
            said = _error_said(exc)
            raise errors.SourceError(f"query API: HTTP {exc.code} {exc.reason}{said}") from exc
        except urllib.error.URLError as exc:
            raise errors.SourceError(f"query API: {exc.reason}") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise errors.SourceError(f"query API: {errors.first_line(exc)}") from exc


def _error_said(exc: urllib.error.HTTPError) -> str:
    """The API's own error text from an error answer's body (bad_data: ...), or ''."""
    try:
        body = exc.read(_BODY_LIMIT)
    except (OSError, http.client.HTTPException):
        return ""
    try:
        parse_query_answer(body)
    except errors.SourceError as error:
        return f": {error}"
    return ""


def read_juicefs_usage(queries: PrometheusQueries) -> dict[str, VolumeUsage]:
    """Every JuiceFS volume's figures, by volume name."""
    return juicefs_usage(queries.query(JUICEFS_QUERY))


def parse_query_answer(body: bytes) -> list[Sample]:
    """The samples of /api/v1/query's JSON answer (an instant vector); SourceError naming what
    was wrong for anything else, the API's own error included."""
    document = _document(body)
    status = document.get("status")
    if status == "error":
        said = f"{document.get('errorType', '')}: {document.get('error', '')}"
        raise errors.SourceError(f"query failed: {said[:_ERROR_TEXT_LIMIT]}")
    data = document.get("data")
    if status != "success" or not isinstance(data, dict):
        raise errors.SourceError("query answer: no status success with data")
    if data.get("resultType") != "vector":
        raise errors.SourceError("query answer: the result is no instant vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise errors.SourceError("query answer: the result is no list")
    return [_sample(element, index) for index, element in enumerate(result)]


def _document(body: bytes) -> dict[str, object]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.SourceError("query answer: not UTF-8") from exc
    try:
        document = jsontext.loads(text)
    except jsontext.JsonError as exc:
        raise errors.SourceError(f"query answer: {exc}") from exc
    if not isinstance(document, dict):
        raise errors.SourceError("query answer: no JSON object")
    return document


def _sample(element: object, index: int) -> Sample:
    where = f"query answer: sample {index}"
    if not isinstance(element, dict):
        raise errors.SourceError(f"{where} is no object")
    labels, pair = element.get("metric"), element.get("value")
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise errors.SourceError(f"{where}: metric is no map of label names to text")
    if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], str):
        raise errors.SourceError(f"{where}: value is no [time, text] pair")
    try:
        value = float(pair[1])
    except ValueError as exc:
        raise errors.SourceError(f"{where}: value {pair[1][:40]!r} is no number") from exc
    return Sample(labels=dict(labels), value=value)


def juicefs_usage(samples: Iterable[Sample]) -> dict[str, VolumeUsage]:
    """Figures by volume from the JuiceFS series; a value that is no count (NaN, negative, out
    of range) stays absent."""
    figures: dict[str, dict[str, int]] = {}
    for sample in samples:
        field = _FIELDS.get(sample.labels.get("__name__", ""))
        volume = sample.labels.get(VOLUME_LABEL, "")
        count = _count(sample.value)
        if field is None or not volume or count is None:
            continue
        figures.setdefault(volume, {})[field] = count
    return {volume: VolumeUsage(**fields) for volume, fields in figures.items()}


def _count(value: float) -> int | None:
    if not math.isfinite(value) or value < 0 or value > _BIGINT_MAX:
        return None
    return round(value)
