"""`lens api` as a role of a process: uvicorn on its own port serving /v1 from the database, the
ops port's /readyz and /metrics, who is asked for a token, the interpreter tuned, and a clean
stop."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lens.roles.api import auth, main
from lens.runtime import errors, interpreter
from lens.runtime.config import (
    ApiConfig,
    Config,
    DatabaseConfig,
    KubeConfig,
    ServerConfig,
    ServiceConfig,
)
from lens.runtime.process import Process
from lens.sim.kube.reviews import User
from lens.sim.kube.server import KubeApiServer


def _config(tmp_path: Path, **api: object) -> Config:
    return Config(
        database=DatabaseConfig(url=f"sqlite:///{tmp_path / 'lens.db'}"),
        server=ServerConfig(host="127.0.0.1", port=0),
        service=ServiceConfig(metrics_interval_seconds=0.2, readiness_interval_seconds=0.2),
        api=ApiConfig(**{"host": "127.0.0.1", "port": 0, **api}),  # type: ignore[arg-type]
    )


def _process(config: Config) -> Process:
    return Process("api", server=config.server, service=config.service, handle_signals=False)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[main.Api]:
    config = _config(tmp_path)
    built = main.build(config, _process(config))
    thread = threading.Thread(target=built.process.service.run, daemon=True)
    thread.start()
    assert built.process.service.started.wait(15)
    yield built
    built.process.service.request_stop("test over")
    thread.join(15)
    assert not thread.is_alive()


def test_the_role_asks_for_the_interpreter_tuned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    applied: list[int] = []
    monkeypatch.setattr(interpreter, "tune_for_throughput", lambda: applied.append(1))
    config = _config(tmp_path)
    built = main.build(config, _process(config))
    built.process.apply_tuning()
    built.db.close()
    assert applied == [1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def _eventually(url: str, wanted: Callable[[int, str], bool]) -> bool:
    deadline = time.monotonic() + 15
    while not wanted(*_get(url)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_api_serves_v1_and_the_ops_port_its_health(running: main.Api) -> None:
    status, body = _get(f"http://127.0.0.1:{running.server.port}/v1/nodes")
    listed = json.loads(body)["data"]
    assert status == 200 and (listed["data"], listed["total"]) == ([], 0)
    status, body = _get(f"http://127.0.0.1:{running.server.port}/v1/nodes/x")
    assert status == 404 and json.loads(body)["meta"]["code"] == 4004
    ops = running.process.http.port
    assert _eventually(f"http://127.0.0.1:{ops}/readyz", lambda status, _: status == 200)
    counted = 'lens_api_requests_total{route="/v1/nodes/{name}",method="GET",status="404"} 1.0'
    # /metrics shows the process's last snapshot, taken every few seconds.
    assert _eventually(f"http://127.0.0.1:{ops}/metrics", lambda _, body: counted in body)
    assert not running.authenticated


def test_beyond_loopback_a_token_is_asked_for(tmp_path: Path) -> None:
    config = _config(tmp_path, host="0.0.0.0")
    with pytest.raises(errors.ConfigError) as refused:
        main.authenticator_of(config, _process(config))
    assert refused.value.key == "api.token_file"
    tokens = tmp_path / "tokens"
    tokens.write_text("a" * 64 + "\n")
    config = _config(tmp_path, host="0.0.0.0", token_file=str(tokens))
    made = main.authenticator_of(config, _process(config))
    assert isinstance(made, auth.Authenticator) and not made.asks_kubernetes


def test_token_review_asks_the_configured_cluster(tmp_path: Path) -> None:
    with KubeApiServer() as kube:
        kube.token_reviews.add("sa", User("system:serviceaccount:lens:grafana", ("viewers",)))
        kubeconfig = kube.write_kubeconfig(tmp_path / "kubeconfig")
        config = _config(tmp_path, host="::", token_review=True, allowed_groups=("viewers",))
        kube_config = KubeConfig(source="kubeconfig", kubeconfig=str(kubeconfig))
        config = dataclasses.replace(config, kube=kube_config)
        made = main.authenticator_of(config, _process(config))
        assert made is not None and made.asks_kubernetes
        assert made.check("sa") is auth.Verdict.ACCEPTED
        assert made.check("sa") is auth.Verdict.ACCEPTED
        assert made.check("other") is auth.Verdict.UNKNOWN
        assert made.check(None) is auth.Verdict.UNKNOWN
        assert kube.token_reviews.reviewed == 2  # "sa" once, then from memory
