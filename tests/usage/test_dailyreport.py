"""The daily report's rows, totals and CSV."""

from __future__ import annotations

import csv
import datetime
import io

import peewee

from lens.store import database, models
from lens.usage import dailyreport

DAY = datetime.date(2026, 11, 23)
START = datetime.datetime(2026, 11, 23, tzinfo=datetime.UTC)


def _daily(kind: str, value: str, held: float, *, key: str = "", model: str = "MI300X") -> None:
    models.GpuHoursDaily.create(
        cluster="c1",
        day=START,
        group_kind=kind,
        group_key=key,
        group_value=value,
        gpu_model=model,
        held_gpu_hours=held,
        used_gpu_hours=held / 2,
        measured_gpu_hours=held,
    )


def test_rows_name_their_workloads_and_totals_count_each_gpu_hour_once(
    db: peewee.Database,
) -> None:
    with database.session(db):
        _daily("namespace", "ml", 10.0)
        _daily("namespace", "dev", 2.0)
        _daily("workload", "w-1", 10.0)
        _daily("workload", "uid-lonely", 2.0)
        _daily("label", "vision", 12.0, key="team")
        models.GpuWorkload.create(
            cluster="c1", uid="w-1", kind="PyTorchJob", namespace="ml", name="llama"
        )
        models.GpuPod.create(cluster="c1", uid="uid-lonely", namespace="dev", name="notebook")
        rows = dailyreport.report_rows("c1", DAY)
        assert dailyreport.report_rows("c1", DAY + datetime.timedelta(days=1)) == []
    named = {r.group_value: (r.workload_kind, r.workload_namespace, r.workload_name) for r in rows}
    assert named["w-1"] == ("PyTorchJob", "ml", "llama")
    assert named["uid-lonely"] == ("Pod", "dev", "notebook")
    assert named["ml"] == ("", "", "")
    sums = dailyreport.totals(rows)
    assert (sums.held_gpu_hours, sums.used_gpu_hours) == (12.0, 6.0)
    assert (sums.namespaces, sums.workloads) == (2, 2)
    parsed = list(csv.DictReader(io.StringIO(dailyreport.render_csv(rows))))
    assert len(parsed) == 5 and list(parsed[0]) == list(dailyreport.COLUMNS)
    team = next(p for p in parsed if p["group_kind"] == "label")
    assert (team["group_key"], team["group_value"], team["held_gpu_hours"]) == (
        "team",
        "vision",
        "12.000000",
    )
