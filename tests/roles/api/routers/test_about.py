"""/v1/about: the version, the cluster asked, the team label and every label GPU-hours were
kept by (the jobs' rows), whether the cluster is simulated, its clock, and when each source of
the figures last fed them."""

from __future__ import annotations

import datetime

import peewee

import lens
from lens.store import freshness
from tests.roles.api.conftest import CLUSTER, data, error, make_client
from tests.roles.api.seriesrows import gpu_minute, write_minutes
from tests.roles.api.usagerows import hours_cluster

NOW = 1_795_000_000.5
NEVER = {"as_of": None, "stale": True}
NOTHING_FEEDS = {
    "controller": NEVER,
    "node_info": NEVER,
    "agents": NEVER,
    "idle": NEVER,
    "gpu_hours": NEVER,
}


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
        "sources": NOTHING_FEEDS,
    }


def _at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def test_what_feeds_the_figures_and_when_it_last_did(db: peewee.Database) -> None:
    """`lens up` without a cluster: agents report, no controller or node info ever ran."""
    client = make_client(db, wall_time=lambda: NOW)
    minute = int(NOW) // 60 * 60 - 60
    write_minutes(db, "n1", [gpu_minute(minute, 0, utilization_mean_ratio=0.5)])
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.IDLE, as_of=_at(NOW - 600), interval_seconds=60
    )
    about = data(client.get("/v1/about"))
    assert isinstance(about, dict)
    assert about["sources"] == {
        **NOTHING_FEEDS,
        "agents": {"as_of": minute, "stale": False},
        "idle": {"as_of": int(NOW) - 600, "stale": True},  # the jobs stopped ten minutes ago
    }
    # Three minutes on without a newer minute: the agents stopped reporting.
    later = make_client(db, wall_time=lambda: NOW + 180)
    late = data(later.get("/v1/about"))
    assert isinstance(late, dict)
    assert late["sources"]["agents"] == {"as_of": minute, "stale": True}


def test_a_simulated_cluster_and_its_clock(db: peewee.Database) -> None:
    """`lens demo --speed 60`: the dashboard learns the cluster's time and how fast it runs
    now (slower while the host cannot keep up)."""
    rate = [60.0]
    client = make_client(
        db, simulated=True, clock_rate=lambda: rate[0], wall_time=lambda: NOW + 3600
    )
    # The node info ran 100 s ago by the cluster's clock, under two real seconds: a loop that
    # late by a moment on a busy host is not a source that stopped (five real seconds' slack).
    ran = _at(NOW + 3600 - 100)
    freshness.record(db, cluster=CLUSTER, figure=freshness.NODES, as_of=ran, interval_seconds=30)
    about = data(client.get("/v1/about"))
    assert isinstance(about, dict)
    assert (about["simulated"], about["now"], about["clock_rate"]) == (True, NOW + 3600, 60.0)
    assert about["sources"]["node_info"] == {"as_of": int(ran.timestamp()), "stale": False}
    rate[0] = 7.5
    about = data(client.get("/v1/about"))
    assert isinstance(about, dict) and about["clock_rate"] == 7.5
    at_real_speed = make_client(db, wall_time=lambda: NOW + 3600)
    real = data(at_real_speed.get("/v1/about"))
    assert isinstance(real, dict)
    assert real["sources"]["node_info"]["stale"] is True


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
        "sources": {
            **NOTHING_FEEDS,
            # Summed at 06:00 on the 21st: after NOW, a clock behind the jobs', never stale.
            "gpu_hours": {"as_of": 1_795_240_800, "stale": False},
        },
    }
    other = data(client.get("/v1/about?cluster=other"))
    assert isinstance(other, dict)
    assert (other["cluster"], other["gpu_hours_labels"]) == ("other", [])
    assert error(client.get("/v1/about?cluster=Not_A_Label"), 400).startswith("cluster")
