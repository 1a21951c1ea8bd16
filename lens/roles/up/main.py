"""`lens up`: the node agent (this host), the jobs and the API — and the controller when a
Kubernetes API is found — in one process that the launcher runs, on the configured database
(SQLite under the data directory unless told otherwise).

`plan` decides what runs and wires the roles to each other (the agent streams to the jobs'
event server on loopback); a role that cannot run here is left out with one line saying why,
and the rest run. Once everything started, one line gives the dashboard's URL.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from collections.abc import Callable

import kubernetes
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors, clients
from lens.roles.api import main as api_main
from lens.roles.controller import main as controller_main
from lens.roles.jobs import main as jobs_main
from lens.roles.node_agent import main as agent_main
from lens.runtime import errors
from lens.runtime.config import Config
from lens.runtime.launcher import Role
from lens.runtime.process import Process

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
PROBE_SECONDS = 3.0  # how long the Kubernetes API may take to answer /version


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What `lens up` runs: the config each role reads, the roles, and what was left out."""

    config: Config
    roles: tuple[Role, ...]
    notes: tuple[str, ...]


def _socket_present(path: str) -> bool:
    return bool(path) and os.path.exists(path)


def _containers(config: Config, notes: list[str]) -> Config:
    """Container sources whose sockets exist; a line for each that does not."""
    containers = config.containers
    if containers.containerd_address and not _socket_present(containers.containerd_address):
        notes.append(f"containerd not followed: no socket at {containers.containerd_address}")
        containers = dataclasses.replace(containers, containerd_address="")
    if containers.docker_address and not _socket_present(containers.docker_address):
        notes.append(f"Docker not followed: no socket at {containers.docker_address}")
        containers = dataclasses.replace(containers, docker_address="")
    if containers.pod_resources_socket and not _socket_present(containers.pod_resources_socket):
        containers = dataclasses.replace(containers, pod_resources_socket="")
    return dataclasses.replace(config, containers=containers)


def _kubernetes(config: Config) -> str | None:
    """Why the Kubernetes API of the kube section cannot be used (None: it answers)."""
    try:
        client = clients.connect(config.kube)
    except errors.ConfigError as exc:
        return str(exc)
    with client:
        try:
            kubernetes.client.VersionApi(client).get_code(_request_timeout=PROBE_SECONDS)
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            where = client.configuration.host
            return f"{where} does not answer: {apierrors.describe(exc)}"
    return None


def plan(config: Config, *, reachable: Callable[[Config], str | None] = _kubernetes) -> Plan:
    """The roles `lens up` runs with `config`, and the config wired for one process."""
    notes: list[str] = []
    jobs = dataclasses.replace(config.jobs, grpc_host=LOOPBACK)
    events = dataclasses.replace(
        config.events, server_address=f"{LOOPBACK}:{config.jobs.grpc_port}"
    )
    wired = dataclasses.replace(config, jobs=jobs, events=events)
    roles: list[Role] = []
    if sys.platform.startswith("linux"):
        wired = _containers(wired, notes)
        roles.append(_agent())
    else:
        notes.append(
            f"node agent not running: it reads Linux's /sys and /dev, not {sys.platform}'s"
        )
    roles.append(jobs_main.ROLE)
    unreachable = reachable(wired)
    if unreachable is None:
        roles.append(controller_main.ROLE)
    else:
        notes.append(f"controller not running: no Kubernetes API found ({unreachable})")
        wired = dataclasses.replace(
            wired, jobs=dataclasses.replace(wired.jobs, watch_cluster="off")
        )
    roles.append(announced(wired))
    return Plan(config=wired, roles=tuple(roles), notes=tuple(notes))


@dataclasses.dataclass
class _Announce:
    """The last part started: one line with the dashboard's URL, once everything listens."""

    url: Callable[[], str]
    name: str = "announce"

    async def start(self) -> None:
        log.info("lens is up", extra={"dashboard": self.url()})
        print(f"Lens is up: {self.url()}  (Ctrl-C stops it)", file=sys.stderr, flush=True)

    async def stop(self) -> None:
        return None


def _agent() -> Role:
    """The node agent, saying in one line when this host shows it no GPU."""

    def build(config: Config, process: Process) -> agent_main.NodeAgent:
        agent = agent_main.build(config, process)
        if not agent.vendors.found():
            log.warning(
                "node agent: no GPU found on this host; it reports its DRI and RDMA devices only"
            )
        return agent

    return dataclasses.replace(agent_main.ROLE, build=build)


def announced(
    config: Config, *, build: Callable[[Config, Process], api_main.Api] = api_main.build
) -> Role:
    """The API role (made by `build`), followed by the part announcing its URL (started after
    every other)."""

    def build_announced(role_config: Config, process: Process) -> api_main.Api:
        api = build(role_config, process)

        def url() -> str:
            host = config.api.host if config.api.host not in ("0.0.0.0", "::") else LOOPBACK
            shown = f"[{host}]" if ":" in host else host
            return f"http://{shown}:{api.server.port}/"

        process.add_part(_Announce(url=url))
        return api

    return dataclasses.replace(api_main.ROLE, build=build_announced)
