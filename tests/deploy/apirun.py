"""`lens api` with api.token_review against the API emulator, recorded: a request with a
bearer token the API server vouches for, and one with a token it does not know."""

from __future__ import annotations

import dataclasses
import urllib.error
import urllib.request
from pathlib import Path

from lens.roles.api import main as api_main
from lens.runtime.config import ApiConfig, Config
from lens.sim.kube.reviews import User
from tests.deploy.roleruns import (
    LOOPBACK,
    Recorded,
    Running,
    database_of,
    emulator,
    kubeconfig_of,
    process_of,
)

TOKEN = "grafana-token"


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ApiRun:
    recorded: Recorded
    statuses: tuple[int, int]  # the known token's answer, the unknown one's


def run(directory: Path) -> ApiRun:
    with emulator() as kube:
        kube.token_reviews.add(
            TOKEN, User("system:serviceaccount:monitoring:grafana", ("viewers",))
        )
        config = Config(
            database=database_of(directory, "api"),
            server=LOOPBACK,
            kube=kubeconfig_of(kube, directory, "home"),
            api=ApiConfig(host="127.0.0.1", port=0, token_review=True, allowed_groups=("viewers",)),
        )
        kube.clear_recorded()
        built = api_main.build(config, process_of("api"))
        running = Running(built.process)
        try:
            url = f"http://127.0.0.1:{built.server.port}/v1/nodes"
            statuses = (_get(url, TOKEN), _get(url, "unknown-token"))
        finally:
            running.stop()
        return ApiRun(recorded=Recorded(home=kube.recorded()), statuses=statuses)
