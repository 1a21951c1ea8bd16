"""The `metrics` config section: the Prometheus-compatible query API Lens reads figures from
that exist nowhere else (JuiceFS capacity; later the API's fallbacks)."""

from __future__ import annotations

import dataclasses

from lens.runtime.settings import setting


def _check_http_url(value: object) -> str | None:
    if value == "" or (isinstance(value, str) and value.startswith(("http://", "https://"))):
        return None
    return "expected an http:// or https:// URL, or empty"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MetricsConfig:
    """Where series Lens does not collect itself are queried."""

    prometheus_url: str = setting(
        "",
        "Base URL of a Prometheus-compatible query API (Prometheus, VictoriaMetrics, Thanos, "
        "Mimir), e.g. http://prometheus:9090; empty: figures only found there stay absent.",
        check=_check_http_url,
    )
    query_timeout_seconds: float = setting(
        10.0, "Timeout of one query to prometheus_url.", minimum=0.1, maximum=300.0
    )
