from __future__ import annotations

from lens.sim.kube import status


def test_errors_render_as_kubernetes_status_objects() -> None:
    error = status.not_found("pods", "p1")
    assert error.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "p1" not found',
        "reason": "NotFound",
        "code": 404,
        "details": {"name": "p1", "group": "", "kind": "pods"},
    }
    assert (
        status.conflict("deployments", "d", "apps")
        .status()["message"]
        .startswith('Operation cannot be fulfilled on deployments.apps "d"')
    )
    assert status.already_exists("pods", "p").code == 409
    assert status.gone("old").status()["reason"] == "Expired"
    assert status.invalid("Pod", "p", "bad").code == 422
    assert status.ApiError(429, "TooManyRequests", "slow", retry_after=2).status()["details"] == {
        "retryAfterSeconds": 2
    }
    assert status.success()["status"] == "Success"
