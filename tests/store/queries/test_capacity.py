"""The cluster's GPUs over time: a step function integrated, read from the agents' inventories
on every engine (a GPU from its first inventory until it left; a lost node's kept)."""

from __future__ import annotations

import math

import peewee

from lens.store import database
from lens.store.queries import capacity
from tests.roles.api.conftest import gpu, write_gpus

T = 1_795_000_000


def test_gpu_seconds_within_an_interval() -> None:
    had = capacity.Capacity([(0.0, 100.0), (50.0, math.inf), (30.0, 30.0)])
    assert had.seconds(0, 50) == 50.0
    assert had.seconds(40, 120) == 60.0 + 70.0
    assert had.seconds(-10, 0) == 0.0 and had.seconds(10, 10) == 0.0
    assert had.seconds(200, 100) == 0.0
    assert capacity.Capacity([]).seconds(0, 1000) == 0.0


def test_the_clusters_gpus_from_their_inventories(db: peewee.Database) -> None:
    write_gpus(db, "n1", (gpu(0), gpu(1)), time=T)
    write_gpus(db, "n1", (gpu(0),), time=T + 600)  # GPU 1 left the bus
    write_gpus(db, "n2", (gpu(0, uuid="B-0"),), time=T + 60)
    with database.session(db):
        had = capacity.cluster_capacity("c1")
        assert capacity.cluster_capacity("other").seconds(T, T + 3600) == 0.0
    # [T, T+60): two GPUs; [T+60, T+600): three; [T+600, T+660): two.
    assert had.seconds(T, T + 660) == 2 * 60 + 3 * 540 + 2 * 60
    assert had.seconds(T - 600, T) == 0.0
