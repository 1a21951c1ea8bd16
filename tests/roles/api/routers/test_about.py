"""/v1/about: the version, the cluster asked, the team label and every label GPU-hours were
kept by (the jobs' rows), whether the cluster is simulated, and its clock."""

from __future__ import annotations

import datetime

import peewee

import lens
from tests.roles.api.conftest import CLUSTER, data, error, make_client
from tests.roles.api.usagerows import hours_cluster

NOW = 1_795_000_000.5


def test_about_an_empty_store(db: peewee.Database) -> None:
    client = make_client(db, team_label="team", wall_time=lambda: NOW)
    about = data(client.get("/v1/about"))
    assert about == {
        "version": lens.__version__,
        "cluster": CLUSTER,
        "team_label": "team",
        "gpu_hours_labels": ["team"],
        "simulated": False,
        "now": NOW,
        "clock_rate": 1.0,
        "max_page_size": 1000,
    }


def test_a_simulated_cluster_and_its_clock(db: peewee.Database) -> None:
    """`lens demo --speed 60`: the dashboard learns the cluster's time and how fast it runs
    now (slower while the host cannot keep up)."""
    rate = [60.0]
    client = make_client(
        db, simulated=True, clock_rate=lambda: rate[0], wall_time=lambda: NOW + 3600
    )
    about = data(client.get("/v1/about"))
    assert isinstance(about, dict)
    assert (about["simulated"], about["now"], about["clock_rate"]) == (True, NOW + 3600, 60.0)
    rate[0] = 7.5
    about = data(client.get("/v1/about"))
    assert isinstance(about, dict) and about["clock_rate"] == 7.5


def test_labels_gpu_hours_were_kept_by_and_another_cluster(db: peewee.Database) -> None:
    hours_cluster(db, datetime.date(2026, 11, 20))  # summed by label `team`
    client = make_client(db, wall_time=lambda: NOW)  # the team label since changed to none
    assert data(client.get("/v1/about")) == {
        "version": lens.__version__,
        "cluster": CLUSTER,
        "team_label": "",
        "gpu_hours_labels": ["team"],
        "simulated": False,
        "now": NOW,
        "clock_rate": 1.0,
        "max_page_size": 1000,
    }
    other = data(client.get("/v1/about?cluster=other"))
    assert isinstance(other, dict)
    assert (other["cluster"], other["gpu_hours_labels"]) == ("other", [])
    assert error(client.get("/v1/about?cluster=Not_A_Label"), 400).startswith("cluster")
