"""Kubernetes API errors in one line: status, reason and the server's message, no headers."""

from __future__ import annotations

import json

import urllib3
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import apierrors

NOT_FOUND = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": 'namespaces "lens" not found',
    "reason": "NotFound",
    "details": {"name": "lens", "kind": "namespaces"},
    "code": 404,
}


def _api_error(status: int, reason: str, body: object) -> ApiException:
    response = urllib3.HTTPResponse(
        body=body if isinstance(body, bytes) else json.dumps(body).encode(),
        headers={"Audit-Id": "0d2c", "Content-Type": "application/json"},
        status=status,
        reason=reason,
        preload_content=True,
    )
    exc = ApiException(http_resp=response)
    exc.body = response.data  # as the client's REST layer leaves it
    return exc


def test_an_api_error_is_its_status_reason_and_message_without_headers() -> None:
    exc = _api_error(404, "Not Found", NOT_FOUND)
    assert "Audit-Id" in str(exc)  # what the client's own text drags along
    assert apierrors.describe(exc) == '404 Not Found: namespaces "lens" not found'
    assert apierrors.is_missing_namespace(exc, "lens")
    assert not apierrors.is_missing_namespace(exc, "other")


def test_without_a_status_body_the_status_and_reason_remain() -> None:
    assert apierrors.describe(_api_error(503, "Service Unavailable", b"<html>")) == (
        "503 Service Unavailable"
    )
    assert apierrors.describe(_api_error(500, "Internal Server Error", [1, 2])) == (
        "500 Internal Server Error"
    )
    assert not apierrors.is_missing_namespace(_api_error(404, "Not Found", b""), "lens")


def test_other_errors_are_their_first_line() -> None:
    assert apierrors.describe(OSError("connection refused\nmore")) == "connection refused"
    assert apierrors.describe(TimeoutError()) == "TimeoutError"


@given(st.binary(max_size=300))
def test_any_body_gives_one_line(body: bytes) -> None:
    described = apierrors.describe(_api_error(400, "Bad Request", body))
    assert described.startswith("400 Bad Request") and "\n" not in described
