"""API errors as the API server reports them: a Kubernetes Status object with a code and reason.

store.py raises them; server.py sends their Status as the response body (and as the object of
ERROR watch events).
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answer: HTTP `code`, Status `reason` and a human message."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry_after = retry_after

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        if self.retry_after is not None:
            body.setdefault("details", {})["retryAfterSeconds"] = self.retry_after
        return body


def _about(code: int, reason: str, message: str, resource: str, name: str, group: str) -> ApiError:
    return ApiError(code, reason, message, details={"name": name, "group": group, "kind": resource})


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    message = f'{_qualified(resource, group)} "{name}" not found'
    return _about(404, "NotFound", message, resource, name, group)


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    message = f'{_qualified(resource, group)} "{name}" already exists'
    return _about(409, "AlreadyExists", message, resource, name, group)


def conflict(resource: str, name: str, group: str = "") -> ApiError:
    message = (
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    return _about(409, "Conflict", message, resource, name, group)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid(kind: str, name: str, message: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'{kind} "{name}" is invalid: {message}',
        details={"name": name, "kind": kind},
    )


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def success() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
