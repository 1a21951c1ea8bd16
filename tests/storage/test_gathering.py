"""Gathering every cluster's storage config into the aggregate: created when missing, updated only
when different, failing clusters skipped and named in one log line, nothing written when none
could be read."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

import pytest

from lens.runtime import errors
from lens.storage import multicluster, secrets
from lens.storage.gathering import ClusterTarget, Gathering
from lens.storage.secrets import SecretData, SecretRef

CONFIG = SecretRef(namespace="lens", name="lens-storage-config")
AGGREGATE = SecretRef(namespace="lens", name="lens-multi-storage-config")


class MemorySecrets:
    """One cluster's Secrets in memory, counting writes; `failing` fails every call."""

    def __init__(self) -> None:
        self.stored: dict[SecretRef, SecretData] = {}
        self.writes = 0
        self.failing: errors.LensError | None = None

    def put_config(self, **entries: object) -> None:
        texts = {k: v if isinstance(v, str) else json.dumps(v) for k, v in entries.items()}
        data = {k: secrets.encode_text(v) for k, v in texts.items()}
        self.stored[CONFIG] = SecretData(data=data, resource_version="1")

    def read(self, ref: SecretRef) -> SecretData | None:
        if self.failing is not None:
            raise self.failing
        return self.stored.get(ref)

    def create(self, ref: SecretRef, data: Mapping[str, str]) -> None:
        assert ref not in self.stored
        self.stored[ref] = SecretData(data=dict(data), resource_version="1")
        self.writes += 1

    def replace(self, ref: SecretRef, data: Mapping[str, str], *, previous: SecretData) -> None:
        if self.stored[ref].resource_version != previous.resource_version:
            raise errors.Conflict("changed since read")
        version = str(int(previous.resource_version) + 1)
        self.stored[ref] = SecretData(data=dict(data), resource_version=version)
        self.writes += 1

    def aggregate(self) -> dict[str, Mapping[str, object]]:
        parsed = multicluster.parse_aggregate(self.stored[AGGREGATE])
        return {cluster: config.entries for cluster, config in parsed.items()}


@pytest.fixture
def clusters() -> dict[str, MemorySecrets]:
    home, east, west = MemorySecrets(), MemorySecrets(), MemorySecrets()
    home.put_config(postgres={"service": "pg", "port": 5432})
    east.put_config(postgres={"service": "pg-east", "port": 5432}, token="abc")
    west.put_config(opensearch={"service": "os"})
    return {"home": home, "east": east, "west": west}


def _targets(clusters: Mapping[str, MemorySecrets]) -> list[ClusterTarget]:
    return [ClusterTarget(name=name, secrets=s) for name, s in clusters.items()]


def _gathering(home: MemorySecrets) -> Gathering:
    return Gathering(home=home, config_secret=CONFIG, aggregate_secret=AGGREGATE)


def test_the_aggregate_is_created_then_updated_only_when_different(
    clusters: dict[str, MemorySecrets],
) -> None:
    home = clusters["home"]
    gathering = _gathering(home)
    outcome = gathering.run(_targets(clusters))
    assert (outcome.written, outcome.gathered, outcome.failed) == (
        "created",
        ("east", "home", "west"),
        {},
    )
    assert home.aggregate() == {
        "home": {"postgres": {"service": "pg", "port": 5432}},
        "east": {"postgres": {"service": "pg-east", "port": 5432}, "token": "abc"},
        "west": {"opensearch": {"service": "os"}},
    }
    assert gathering.run(_targets(clusters)).written == "unchanged"
    assert home.writes == 1
    clusters["west"].put_config(opensearch={"service": "os", "port": 9200})
    assert gathering.run(_targets(clusters)).written == "updated"
    assert home.aggregate()["west"] == {"opensearch": {"service": "os", "port": 9200}}
    assert home.writes == 2


def test_failing_clusters_are_skipped_and_named_in_one_line(
    clusters: dict[str, MemorySecrets], caplog: pytest.LogCaptureFixture
) -> None:
    home = clusters["home"]
    gathering = _gathering(home)
    gathering.run(_targets(clusters))
    clusters["east"].failing = errors.SourceError("cluster east: connection refused")
    del clusters["west"].stored[CONFIG]
    targets = [
        *_targets(clusters),
        ClusterTarget(name="north", secrets=None, problem="not a usable kubeconfig"),
    ]
    with caplog.at_level(logging.INFO, logger="lens.storage.gathering"):
        outcome = gathering.run(targets)
        gathering.run(targets)
    assert outcome.gathered == ("home",) and outcome.written == "updated"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, "one line names them all, once"
    assert warnings[0].__dict__["clusters"] == {
        "east": "cluster east: connection refused",
        "north": "not a usable kubeconfig",
        "west": "secret lens/lens-storage-config not found",
    }
    # A cluster that cannot be reached keeps its last entry; one whose config is gone does not.
    assert sorted(home.aggregate()) == ["east", "home"]


def test_nothing_is_written_when_no_cluster_could_be_read(
    clusters: dict[str, MemorySecrets], caplog: pytest.LogCaptureFixture
) -> None:
    home = clusters["home"]
    for cluster in clusters.values():
        cluster.stored.pop(CONFIG)
    with caplog.at_level(logging.ERROR, logger="lens.storage.gathering"):
        outcome = _gathering(home).run(_targets(clusters))
    assert outcome.written == "nothing" and home.writes == 0
    assert AGGREGATE not in home.stored
    assert [r.message for r in caplog.records] == [
        "no cluster's storage config could be read; nothing written"
    ]


def test_a_malformed_aggregate_is_written_anew(clusters: dict[str, MemorySecrets]) -> None:
    home = clusters["home"]
    # The original exporter's shape (entries left as base64 text, #24) beside a value that is
    # no base64 at all.
    original = json.dumps({"postgres": secrets.encode_text('{"service": "pg"}')})
    home.stored[AGGREGATE] = SecretData(
        data={"home": secrets.encode_text(original), "old": "%%"}, resource_version="4"
    )
    assert _gathering(home).run(_targets(clusters)).written == "updated"
    assert home.aggregate()["home"] == {"postgres": {"service": "pg", "port": 5432}}
    assert "old" not in home.aggregate()
