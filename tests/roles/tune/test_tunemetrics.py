from __future__ import annotations

import math

from lens.roles.tune.tunemetrics import TuneMetrics
from lens.runtime.selfmetrics import SelfMetrics
from lens.tune.planning import ParameterState


def _state(name: str, place: str, desired: str, actual: str, ok: bool) -> ParameterState:
    return ParameterState(
        name=name, place=place, mode="at_least", desired=desired, actual=actual, in_sync=ok
    )


def test_fields_unlimited_unset_and_removed_series() -> None:
    metrics = SelfMetrics(process=False)
    tune = TuneMetrics(metrics)
    get = metrics.registry.get_sample_value
    ports = {"parameter": "net.ipv4.ip_local_port_range", "place": "live"}
    soft = {"parameter": "nofile soft", "place": "containerd"}
    tune.show(
        [
            _state(ports["parameter"], "live", "1024 65535", "32768 60999", False),
            _state("nofile soft", "containerd", "131072", "unlimited", True),
        ],
        conflicts=1,
    )
    assert get("lens_tune_parameter_desired", {**ports, "field": "1"}) == 65535
    assert get("lens_tune_parameter_actual", {**ports, "field": "0"}) == 32768
    assert get("lens_tune_parameter_actual", {**soft, "field": "0"}) == math.inf
    assert (get("lens_tune_drifted_parameters"), get("lens_tune_conflicts")) == (1, 1)
    tune.show([_state("nofile soft", "containerd", "131072", "unset", False)], conflicts=0)
    assert get("lens_tune_parameter_actual", {**soft, "field": "0"}) is None
    assert get("lens_tune_parameter_desired", {**soft, "field": "0"}) == 131072
    assert get("lens_tune_parameter_in_sync", ports) is None
    assert get("lens_tune_parameter_desired", {**ports, "field": "1"}) is None


def test_writes_count_by_kind_and_stamp_the_last_apply() -> None:
    metrics = SelfMetrics(process=False)
    tune = TuneMetrics(metrics)
    get = metrics.registry.get_sample_value
    tune.wrote(sysctls=0, files=0, at=5.0)
    assert get("lens_tune_last_apply_timestamp_seconds") == 0
    tune.wrote(sysctls=2, files=1, at=7.0)
    assert get("lens_tune_writes_total", {"kind": "sysctl"}) == 2
    assert get("lens_tune_writes_total", {"kind": "file"}) == 1
    assert get("lens_tune_last_apply_timestamp_seconds") == 7.0
