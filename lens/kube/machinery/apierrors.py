"""Kubernetes API errors said plainly: status, reason and the server's message.

`str()` of the client's ApiException is its status, reason, every HTTP response header and the
raw body, over several lines, which is what an operator would otherwise find in the logs every
retry. The server's Status object (its `message`) already says what is wrong.
"""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException

from lens.runtime import errors

_MESSAGE_LIMIT = 300


def describe(exc: BaseException) -> str:
    """One line: `404 Not Found: namespaces "lens" not found` for an API error; the first line
    of anything else."""
    if not isinstance(exc, ApiException):
        return errors.first_line(exc)
    said = f"{exc.status} {exc.reason}".strip() if exc.status else str(exc.reason or "")
    message = status_message(exc)
    return f"{said}: {message}" if message else said or "API error"


def status_message(exc: ApiException) -> str:
    """The message of the Status object the API server answered with; '' when there is none."""
    body = exc.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip():
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return ""
    message = status.get("message") if isinstance(status, dict) else None
    if not isinstance(message, str):
        return ""
    return " ".join(message.split())[:_MESSAGE_LIMIT]


def is_missing_namespace(exc: BaseException, namespace: str) -> bool:
    """The API server's answer when a namespaced object is created in a namespace that does
    not exist."""
    return (
        isinstance(exc, ApiException)
        and exc.status == 404
        and status_message(exc) == f'namespaces "{namespace}" not found'
    )
