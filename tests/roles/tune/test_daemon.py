"""The daemon's cycle on a temporary host: repairs drift, writes nothing at all while nothing
drifts (an hour of checks), reports without repairing when told, and tells readiness why not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lens.roles.tune.daemon import TuneDaemon
from lens.roles.tune.tunemetrics import TuneMetrics
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.tune import policyfile

RECORD = "var/lib/lens/tune/record.json"


class Daemon:
    def __init__(self, host: Path, *, repair: bool = True, policy: str = "") -> None:
        self.clock = FakeClock()
        self.metrics = SelfMetrics(process=False)
        self.labels: dict[str, str] = {}
        self.daemon = TuneDaemon(
            root=host,
            record_file=host / RECORD,
            policy=policyfile.PolicyFile(policy),
            labels=lambda: self.labels,
            repair=repair,
            metrics=TuneMetrics(self.metrics),
            clock=self.clock,
        )

    def value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        return self.metrics.registry.get_sample_value(name, labels or {})

    def writes(self) -> float:
        return sum(
            self.value("lens_tune_writes_total", {"kind": k}) or 0 for k in ("sysctl", "file")
        )


def _mtimes(host: Path) -> dict[str, int]:
    return {str(p): os.stat(p).st_mtime_ns for p in host.rglob("*")}


@pytest.mark.slow_timeout  # 1,800 cycles
def test_an_hour_of_checks_with_nothing_drifting_writes_nothing(host: Path) -> None:
    tuned = Daemon(host)
    tuned.daemon.cycle()
    assert tuned.writes() == 3  # the live value and two drop-ins (sysctl.d, systemd), once
    first = tuned.value("lens_tune_last_apply_timestamp_seconds")
    assert first == tuned.clock.time()
    before = _mtimes(host)
    for _ in range(1800):  # an hour at the default 2 s
        tuned.clock.advance(2.0)
        tuned.daemon.cycle()
    assert tuned.writes() == 3
    assert _mtimes(host) == before
    assert tuned.value("lens_tune_last_apply_timestamp_seconds") == first
    assert tuned.value("lens_tune_drifted_parameters") == 0


def test_drift_is_repaired_at_the_next_cycle(host: Path) -> None:
    tuned = Daemon(host)
    tuned.daemon.cycle()
    (host / "proc/sys/vm/max_map_count").write_text("65530\n")
    (host / "etc/sysctl.d/99-lens.conf").unlink()
    tuned.clock.advance(2.0)
    tuned.daemon.cycle()
    assert (host / "proc/sys/vm/max_map_count").read_text() == "262144\n"
    assert (host / "etc/sysctl.d/99-lens.conf").is_file()
    assert tuned.writes() == 5
    live = {"parameter": "vm.max_map_count", "place": "live"}
    assert tuned.value("lens_tune_parameter_in_sync", live) == 1
    assert tuned.value("lens_tune_parameter_actual", {**live, "field": "0"}) == 262144
    assert tuned.value("lens_tune_parameter_desired", {**live, "field": "0"}) == 262144


def test_without_repair_drift_is_reported_and_nothing_written(host: Path) -> None:
    tuned = Daemon(host, repair=False)
    before = _mtimes(host)
    tuned.daemon.cycle()
    assert _mtimes(host) == before and tuned.writes() == 0
    live = {"parameter": "vm.max_map_count", "place": "live"}
    assert tuned.value("lens_tune_parameter_in_sync", live) == 0
    assert tuned.value("lens_tune_parameter_actual", {**live, "field": "0"}) == 65530
    unset = {"parameter": "vm.max_map_count", "place": "sysctl.d", "field": "0"}
    assert tuned.value("lens_tune_parameter_actual", unset) is None  # unset: no series
    # live and sysctl.d, and the soft limit of systemd's default (1024) and of login sessions,
    # which inherit it; the hard one (524288) meets the policy
    assert tuned.value("lens_tune_drifted_parameters") == 4
    tuned.daemon.ready()


def test_a_host_file_it_cannot_parse_fails_readiness_until_fixed(host: Path) -> None:
    tuned = Daemon(host)
    with pytest.raises(RuntimeError, match="not been checked"):
        tuned.daemon.ready()
    bad = host / "etc/sysctl.conf"
    bad.write_text("vm.max_map_count\n")
    tuned.daemon.cycle()
    with pytest.raises(RuntimeError, match=r"sysctl\.conf:1: a line 'key = value'"):
        tuned.daemon.ready()
    bad.write_text("vm.max_map_count = 262144\n")
    tuned.daemon.cycle()
    tuned.daemon.ready()


def test_a_policy_turned_bad_keeps_the_last_good_one_and_fails_readiness(
    host: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("sysctls: {kernel.numa_balancing: {exactly: 0}}\n")
    tuned = Daemon(host, policy=str(policy))
    tuned.daemon.cycle()
    assert (host / "proc/sys/kernel/numa_balancing").read_text() == "0\n"
    policy.write_text("sysctls: {kernel.numa_balancing: {exactly: zero}}\n")
    (host / "proc/sys/kernel/numa_balancing").write_text("1\n")
    tuned.daemon.cycle()
    assert (host / "proc/sys/kernel/numa_balancing").read_text() == "0\n"
    with pytest.raises(RuntimeError, match="last good policy stays in force"):
        tuned.daemon.ready()


def test_labels_select_a_profile_and_its_series_go_with_it(host: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "profiles: [{match: {gpu: 'yes'}, sysctls: {kernel.numa_balancing: {exactly: 0}}}]\n"
    )
    tuned = Daemon(host, policy=str(policy))
    numa = {"parameter": "kernel.numa_balancing", "place": "live"}
    tuned.daemon.cycle()
    assert tuned.value("lens_tune_parameter_in_sync", numa) is None
    tuned.labels = {"gpu": "yes"}
    tuned.daemon.cycle()
    assert tuned.value("lens_tune_parameter_in_sync", numa) == 1
    tuned.labels = {}
    tuned.daemon.cycle()
    assert tuned.value("lens_tune_parameter_in_sync", numa) is None
    assert tuned.value("lens_tune_parameter_desired", {**numa, "field": "0"}) is None


def test_a_refused_live_value_is_no_write_storm_and_still_shows(host: Path) -> None:
    """The live file is made immutable (as root): every write to it fails, as a value the
    kernel refuses does."""
    live = host / "proc/sys/vm/max_map_count"
    subprocess.run(["chattr", "+i", str(live)], check=True)
    try:
        tuned = Daemon(host)
        tuned.daemon.cycle()
        assert (host / "etc/sysctl.d/99-lens.conf").is_file()  # the files written all the same
        assert tuned.writes() == 2
        record = (host / RECORD).stat().st_mtime_ns
        for _ in range(50):
            tuned.clock.advance(2.0)
            tuned.daemon.cycle()
        assert tuned.writes() == 2 and (host / RECORD).stat().st_mtime_ns == record
        live_labels = {"parameter": "vm.max_map_count", "place": "live"}
        assert tuned.value("lens_tune_parameter_in_sync", live_labels) == 0
        with pytest.raises(RuntimeError, match=r"cannot set vm\.max_map_count"):
            tuned.daemon.ready()
    finally:
        subprocess.run(["chattr", "-i", str(live)], check=True)
    live.write_text("1000\n")  # the value changed: tried again, and set
    tuned.daemon.cycle()
    assert live.read_text() == "262144\n"
    tuned.daemon.ready()
