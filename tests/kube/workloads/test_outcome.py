"""How a workload ended, read from its conditions, and why a pod failed, from its status."""

from __future__ import annotations

import datetime

import pytest

from lens.kube.workloads import outcome

AT = "2026-11-21T11:40:00Z"
WHEN = datetime.datetime(2026, 11, 21, 11, 40, tzinfo=datetime.UTC)


def _with(*conditions: dict[str, object]) -> dict[str, object]:
    return {"status": {"conditions": list(conditions)}}


@pytest.mark.parametrize(
    ("conditions", "ending"),
    [
        ([], None),
        ([{"type": "Complete", "status": "False"}], None),
        ([{"type": "Suspended", "status": "True"}], None),
        (
            [{"type": "Complete", "status": "True", "lastTransitionTime": AT}],
            outcome.Ending(status="Succeeded", reason="", at=WHEN),
        ),
        (
            [{"type": "Completed", "status": "True"}],  # a JobSet's
            outcome.Ending(status="Succeeded", reason="", at=None),
        ),
        (
            [
                {"type": "Succeeded", "status": "True"},  # a failure wins over a success
                {"type": "Failed", "status": "True", "reason": "PyTorchJobFailed"},
            ],
            outcome.Ending(status="Failed", reason="PyTorchJobFailed", at=None),
        ),
        (
            [{"type": "Failed", "status": "True", "lastTransitionTime": "not a time"}],
            outcome.Ending(status="Failed", reason="Failed", at=None),
        ),
    ],
)
def test_terminal_conditions(
    conditions: list[dict[str, object]], ending: outcome.Ending | None
) -> None:
    assert outcome.terminal_condition(_with(*conditions)) == ending


@pytest.mark.parametrize("status", [None, "x", {"conditions": "x"}, {"conditions": ["x", 1]}])
def test_a_status_of_another_shape_ends_nothing(status: object) -> None:
    assert outcome.terminal_condition({"status": status}) is None


def _terminated(reason: str, code: int) -> dict[str, object]:
    return {"state": {"terminated": {"reason": reason, "exitCode": code}}}


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ({"phase": "Failed", "reason": "Evicted"}, "Evicted"),
        (
            {
                "phase": "Failed",
                "containerStatuses": [_terminated("Error", 1), _terminated("OOMKilled", 137)],
            },
            "OOMKilled",
        ),
        ({"phase": "Failed", "containerStatuses": [_terminated("Error", 2)]}, "Error"),
        ({"phase": "Failed", "containerStatuses": [_terminated("Completed", 0)]}, "Error"),
        ({"phase": "Failed", "containerStatuses": "x"}, "Error"),
        ({"phase": "Failed"}, "Error"),
    ],
)
def test_why_a_pod_failed(status: dict[str, object], reason: str) -> None:
    assert outcome.pod_failure_reason({"status": status}) == reason
