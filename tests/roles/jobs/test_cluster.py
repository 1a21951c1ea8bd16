"""Whether `lens jobs` watches the cluster: off, on (an API is required) or auto (watched when
the kube section finds an API, else one line says the cluster jobs do not run)."""

from __future__ import annotations

import logging
from pathlib import Path

import kubernetes
import pytest

from lens.roles.jobs import cluster
from lens.runtime import errors
from lens.runtime.config import Config, JobsConfig, KubeConfig
from lens.runtime.process import Process


def _process() -> Process:
    config = Config()
    return Process("jobs", server=config.server, service=config.service, handle_signals=False)


def _config(tmp_path: Path, watch: str) -> Config:
    missing = KubeConfig(source="kubeconfig", kubeconfig=str(tmp_path / "no-kubeconfig"))
    return Config(jobs=JobsConfig(watch_cluster=watch), kube=missing)  # type: ignore[arg-type]


def test_off_watches_nothing(api_client: kubernetes.client.ApiClient, tmp_path: Path) -> None:
    assert cluster.add(_config(tmp_path, "off"), _process(), api=api_client) is None


def test_auto_without_an_api_says_so_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert cluster.add(_config(tmp_path, "auto"), _process()) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "no Kubernetes API found" in lines[0]


def test_on_without_an_api_is_a_config_error_naming_the_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        cluster.add(_config(tmp_path, "on"), _process())
    assert caught.value.key == "kube.kubeconfig"


def test_with_an_api_the_caches_join_the_process_and_its_readiness(
    api_client: kubernetes.client.ApiClient, tmp_path: Path
) -> None:
    process = _process()
    caches = cluster.add(_config(tmp_path, "auto"), process, api=api_client)
    assert caches is not None
    with pytest.raises(errors.NoDataError, match="first listing"):
        caches.check()  # not started yet: /readyz says what it waits for
