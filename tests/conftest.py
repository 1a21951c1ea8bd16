"""Shared fixtures: fresh databases on SQLite, PostgreSQL and MariaDB (real servers: .ci/run),
an API emulator with a client, containerd and dockerd harnesses, simulated hosts."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import kubernetes
import peewee
import pytest
from hypothesis import HealthCheck, settings

from lens.devices.sysfs import HostFiles
from lens.roles.jobs import main as jobs_main
from lens.roles.jobs.main import Jobs
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    ClusterConfig,
    Config,
    DatabaseConfig,
    JobsConfig,
    ServerConfig,
    TelemetryConfig,
)
from lens.runtime.process import Process
from lens.sim.containerd import PrivateContainerd, make_device_node
from lens.sim.docker import PrivateDocker
from lens.sim.hosts import profiles
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.server import KubeApiServer
from lens.store import database, migrating
from tests.databases import ENGINES, MigratedTemplates, close_all, new_database
from tests.telemetry.remotewrite.target import Target


@pytest.fixture(params=ENGINES)
def database_engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn (a test narrows them with parametrize(..., indirect=True))."""
    engine: str = request.param
    return engine


@pytest.fixture
def empty_database_url(database_engine: str, tmp_path: Path) -> Iterator[str]:
    """The URL of a new, empty database, once per engine."""
    with new_database(database_engine, tmp_path) as url:
        yield url


@pytest.fixture(scope="session")
def migrated_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MigratedTemplates]:
    """Each engine's database migrated once for the run (per xdist worker), for copies."""
    templates = MigratedTemplates(tmp_path_factory.mktemp("templates"))
    try:
        yield templates
    finally:
        templates.close()


@pytest.fixture
def migrated_database_url(
    database_engine: str, tmp_path: Path, migrated_templates: MigratedTemplates
) -> Iterator[str]:
    """The URL of a new database with the migrated schema — a copy of the run's migrated
    template (tests/databases.py says why) — once per engine."""
    template = migrated_templates.url(database_engine)
    with new_database(database_engine, tmp_path, template=template) as url:
        yield url


@pytest.fixture
def db(migrated_database_url: str) -> Iterator[peewee.Database]:
    """A migrated database with every model bound to it."""
    database_ = database.open_database(DatabaseConfig(url=migrated_database_url))
    try:
        yield database_
    finally:
        close_all(database_)


@pytest.fixture
def freshly_migrated_db(empty_database_url: str) -> Iterator[peewee.Database]:
    """A database migrated from empty by the test itself, not copied: for tests of what the
    migrations make."""
    database_ = database.open_database(DatabaseConfig(url=empty_database_url))
    migrating.migrate(database_)
    try:
        yield database_
    finally:
        close_all(database_)


@pytest.fixture
def sqlite_db(tmp_path: Path, migrated_templates: MigratedTemplates) -> Iterator[peewee.Database]:
    """A migrated SQLite database: for what does not depend on the engine (bad input), or
    what only SQLite's locking shows."""
    with new_database("sqlite", tmp_path, template=migrated_templates.url("sqlite")) as url:
        db = database.open_database(DatabaseConfig(url=url))
        yield db
        close_all(db)


def others_may_write(db: peewee.Database) -> bool:
    """Whether another connection to the SQLite database `db` could take its write lock now:
    False while a transaction of `db` holds it (one that began IMMEDIATE, or wrote)."""
    other = sqlite3.connect(str(db.database), timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return False
    else:
        other.execute("ROLLBACK")
        return True
    finally:
        other.close()


def write_lock_seen(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, db: peewee.Database
) -> list[bool]:
    """Patch `owner.name` (a method or a module's function) to note, at each call, whether
    another connection could still write the SQLite database `db` then (others_may_write)."""
    seen: list[bool] = []
    original = getattr(owner, name)

    def noting(*args: object, **kwargs: object) -> object:
        seen.append(others_may_write(db))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)
    return seen


Predicate = Callable[[], bool]


def _eventually(predicate: Predicate, timeout: float = 3.0) -> None:
    """Wait (without sleeping the test's own logic) until `predicate` holds, or fail."""
    gate = threading.Event()
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        gate.wait(0.002)


@pytest.fixture
def eventually() -> Callable[..., None]:
    """`eventually(predicate, timeout=3.0)`: wait for another thread to make predicate true."""
    return _eventually


# --- golden exposition files (STYLE S14.3) ----------------------------------------------------

_LABEL_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite the golden exposition files under tests/**/golden/ instead of comparing.",
    )


@pytest.fixture
def promtool_problems() -> Callable[[bytes], str]:
    """What `promtool check metrics` says of an exposition: empty when it has no error and no
    warning (it exits 3 on warnings alone, 1 on errors)."""

    def check(exposition: bytes) -> str:
        result = subprocess.run(
            ["promtool", "check", "metrics"],
            input=exposition,
            capture_output=True,
            timeout=30,
            check=False,
        )
        said = (result.stdout + result.stderr).decode()
        return said if result.returncode != 0 or said else ""

    return check


def normalize_exposition(text: str) -> list[str]:
    """Lines of a text exposition with labels sorted within each sample, then lines sorted."""
    lines = []
    for line in text.splitlines():
        if "{" in line and not line.startswith("#"):
            name, rest = line.split("{", 1)
            labels, value = rest.rsplit("}", 1)
            pairs = sorted(_LABEL_RE.findall(labels))
            line = name + "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}" + value
        lines.append(line)
    return sorted(lines)


Golden = Callable[[str, str], None]


@pytest.fixture
def normalized() -> Callable[[str], list[str]]:
    """normalize_exposition, for tests that compare two expositions."""
    return normalize_exposition


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """golden(name, text): compare with tests/<dir>/golden/<name>, ignoring label and line order."""
    directory = Path(str(request.path)).parent / "golden"
    update = bool(request.config.getoption("--update-golden"))

    def check(name: str, text: str) -> None:
        path = directory / name
        if update:
            directory.mkdir(exist_ok=True)
            path.write_text(text)
            return
        assert path.exists(), f"{path} is missing; run pytest --update-golden to write it"
        assert normalize_exposition(text) == normalize_exposition(path.read_text())

    return check


@pytest.fixture
def memory_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh directory in memory (/dev/shm) when there is one: host trees write ~1,000 files."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(prefix="lens-test-", dir=shm))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- simulated host trees ---------------------------------------------------------------------


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start_time=1_800_000_000.0)


@pytest.fixture
def mi300x(memory_dir: Path, clock: FakeClock) -> HostTree:
    """An 8 x MI300X node with 8 RoCE ports, GPU i steadily at 10*(i+1) % load."""
    loads: list[profiles.Profile] = [profiles.Constant(10.0 * (i + 1)) for i in range(8)]
    return HostTree(
        memory_dir / "mi300x", NodeSpec(name="gpu-node-1"), clock=clock, device_profiles=loads
    ).build()


@pytest.fixture
def cpx(memory_dir: Path, clock: FakeClock) -> HostTree:
    """Two MI300X in CPX mode (8 compute partitions each), InfiniBand ports."""
    spec = NodeSpec(
        name="gpu-node-cpx", gpus=2, rdma=2, compute_partition="CPX", rdma_link_layer="InfiniBand"
    )
    return HostTree(memory_dir / "cpx", spec, clock=clock).build()


@pytest.fixture
def h100(memory_dir: Path, clock: FakeClock) -> HostTree:
    """Two NVIDIA H100 and one InfiniBand port."""
    spec = NodeSpec(name="gpu-node-nv", model="H100", gpus=2, rdma=1, rdma_link_layer="InfiniBand")
    return HostTree(memory_dir / "h100", spec, clock=clock).build()


@pytest.fixture
def host(mi300x: HostTree) -> HostFiles:
    return HostFiles(mi300x.root)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow_timeout, and property-based tests, get 60 s instead of the default 5 s
    (scripts/fuzz turns the timeout off for its long runs); tests on a database server get 20 s,
    as the timeout counts their fixtures' CREATE and DROP DATABASE, which wait for a disk the
    other worker keeps busy."""
    fuzzing = os.environ.get("LENS_HYPOTHESIS_PROFILE") == "fuzz"
    for item in items:
        if item.get_closest_marker("timeout"):
            continue
        # Hypothesis marks its tests after this hook, so its own flag on the function tells.
        is_property = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
        is_property = is_property or item.get_closest_marker("hypothesis") is not None
        if is_property and fuzzing:
            item.add_marker(pytest.mark.timeout(0))  # a marker would outrank --timeout 0
        elif is_property or item.get_closest_marker("slow_timeout"):
            item.add_marker(pytest.mark.timeout(60))
        elif _on_a_database_server(item):
            item.add_marker(pytest.mark.timeout(20))


def _on_a_database_server(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    engine = callspec.params.get("database_engine", "sqlite") if callspec else "sqlite"
    return engine != "sqlite"


# --- property-based tests (docs/testing.md) ---------------------------------------------------

# CI: a small, fixed set of generated inputs per test, so a run is repeatable and a failure is
# never a coin toss. scripts/fuzz: the "fuzz" profile, fresh random inputs, LENS_FUZZ_EXAMPLES each.
_QUIET_CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=_QUIET_CHECKS
)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("LENS_FUZZ_EXAMPLES", "1000")),
    deadline=None,
    suppress_health_check=_QUIET_CHECKS,
)
settings.load_profile(os.environ.get("LENS_HYPOTHESIS_PROFILE", "ci"))


# Device numbers of the mi300x host tree's first GPU and first RDMA device.
RENDER_NUMBER = (226, 128)
CARD_NUMBER = (226, 1)
UVERBS_NUMBER = (231, 192)


def private_containerd(directory: Path, *, cri: bool = False) -> Iterator[PrivateContainerd]:
    """containerd on a private socket under `directory` with the busybox image imported."""
    runtime = PrivateContainerd(directory, cri=cri)
    runtime.start()
    try:
        runtime.import_image()
        yield runtime
    finally:
        runtime.stop()


@pytest.fixture(scope="session")
def containerd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateContainerd]:
    """containerd on a private socket with the busybox image imported, for the whole run."""
    yield from private_containerd(tmp_path_factory.mktemp("ctd"))


@pytest.fixture(scope="module")
def cri_containerd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateContainerd]:
    """containerd with its CRI plugin, which keeps a container's status past its task; one per
    test module, as each module's pods and containers are its own."""
    yield from private_containerd(tmp_path_factory.mktemp("cri"), cri=True)


@pytest.fixture(scope="session")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateDocker]:
    """dockerd on a private socket with the busybox image loaded, for the whole run."""
    engine = PrivateDocker(tmp_path_factory.mktemp("docker"))
    engine.start()
    try:
        engine.load_image()
        yield engine
    finally:
        engine.stop()


@pytest.fixture(scope="session")
def device_nodes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Character devices standing in for a GPU's render and card nodes and an RDMA uverbs."""
    directory = tmp_path_factory.mktemp("dev")
    return {
        "render": make_device_node(directory / "renderD128", *RENDER_NUMBER),
        "card": make_device_node(directory / "card1", *CARD_NUMBER),
        "uverbs": make_device_node(directory / "uverbs0", *UVERBS_NUMBER),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def free_port() -> Callable[[], int]:
    """free_port() -> a TCP port nothing listens on now."""
    return _free_port


class RunningJobs:
    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs
        self._thread = threading.Thread(target=jobs.process.service.run, daemon=True)
        self._thread.start()
        assert jobs.process.service.started.wait(10)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.jobs.grpc.port}"

    def stop(self) -> None:
        if self._thread.is_alive():
            self.jobs.process.service.request_stop("test over")
            self._thread.join(15)


StartJobs = Callable[..., RunningJobs]


@pytest.fixture
def start_jobs(migrated_database_url: str, tmp_path: Path) -> Iterator[StartJobs]:
    started: list[RunningJobs] = []

    def start(
        *, token: str = "", port: int = 0, telemetry: TelemetryConfig | None = None
    ) -> RunningJobs:
        """`lens jobs` on free ports; `telemetry`: that section (with it the cluster is named
        "lab", as tests/telemetry/enrichment's)."""
        token_file = ""
        if token:
            token_file = str(tmp_path / "token")
            Path(token_file).write_text(token + "\n")
        config = Config(
            database=DatabaseConfig(url=migrated_database_url),
            server=ServerConfig(host="127.0.0.1", port=0),
            jobs=JobsConfig(
                grpc_host="127.0.0.1",
                grpc_port=port,
                token_file=token_file,
                watch_cluster="off",
                daily_report_time="",
            ),
        )
        if telemetry is not None:
            config = dataclasses.replace(
                config, telemetry=telemetry, cluster=ClusterConfig(name="lab")
            )
        process = Process(
            "jobs", server=config.server, service=config.service, handle_signals=False
        )
        running = RunningJobs(jobs_main.build(config, process))
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def apiserver() -> Iterator[KubeApiServer]:
    server = KubeApiServer(bookmark_interval=0.2, history_size=1000, rng=random.Random(3))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def api_client(apiserver: KubeApiServer) -> Iterator[kubernetes.client.ApiClient]:
    configuration = kubernetes.client.Configuration()
    configuration.host = apiserver.url
    client = kubernetes.client.ApiClient(configuration)
    yield client
    client.close()


@pytest.fixture
def target() -> Iterator[Target]:
    """A remote-write target on a free port (what lens jobs forwards ends there)."""
    started = Target()
    yield started
    started.close()
