"""/v1/about: the version, the cluster asked, the team label and every label GPU-hours were
kept by (the jobs' rows), and whether the cluster is simulated."""

from __future__ import annotations

import datetime

import peewee

import lens
from tests.roles.api.conftest import CLUSTER, data, error, make_client
from tests.roles.api.usagerows import hours_cluster


def test_about_an_empty_store(db: peewee.Database) -> None:
    about = data(make_client(db, team_label="team").get("/v1/about"))
    assert about == {
        "version": lens.__version__,
        "cluster": CLUSTER,
        "team_label": "team",
        "gpu_hours_labels": ["team"],
        "simulated": False,
        "max_page_size": 1000,
    }


def test_labels_gpu_hours_were_kept_by_and_another_cluster(db: peewee.Database) -> None:
    hours_cluster(db, datetime.date(2026, 11, 20))  # summed by label `team`
    client = make_client(db)  # the jobs' team label since changed to none
    assert data(client.get("/v1/about")) == {
        "version": lens.__version__,
        "cluster": CLUSTER,
        "team_label": "",
        "gpu_hours_labels": ["team"],
        "simulated": False,
        "max_page_size": 1000,
    }
    other = data(client.get("/v1/about?cluster=other"))
    assert isinstance(other, dict)
    assert (other["cluster"], other["gpu_hours_labels"]) == ("other", [])
    assert error(client.get("/v1/about?cluster=Not_A_Label"), 400).startswith("cluster")
