from __future__ import annotations

from collections.abc import Callable

import pytest

from lens.runtime import errors
from lens.runtime.config import Config, DatabaseConfig, JobsConfig
from lens.runtime.process import Process
from tests.opsport import get

pytestmark = pytest.mark.slow_timeout


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_jobs_serves_events_health_and_the_original_metric_names(
    start_jobs: Callable[..., object], eventually: Callable[..., None]
) -> None:
    running = start_jobs()
    port = running.jobs.process.http.port  # type: ignore[attr-defined]
    assert running.jobs.grpc.port > 0  # type: ignore[attr-defined]
    eventually(lambda: get(port, "/readyz")[0] == 200, timeout=15)
    eventually(lambda: "primus_lens_jobs" in get(port, "/metrics")[1], timeout=15)
    _, text = get(port, "/metrics")
    for name in (
        "primus_lens_jobs_upstream_error_total",
        "primus_lens_jobs_event_processing_duration_seconds",
        "lens_events_lag_seconds",
        "lens_events_duplicates_total",
    ):
        assert f"# TYPE {name}" in text


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_half_a_tls_pair_fails_the_start(empty_database_url: str) -> None:
    from lens.roles.jobs import main

    config = Config(
        database=DatabaseConfig(url=empty_database_url), jobs=JobsConfig(tls_cert_file="/x.pem")
    )
    with pytest.raises(errors.ConfigError, match=r"jobs\.tls_cert_file"):
        main.build(config, Process("jobs", server=config.server, service=config.service))
