"""The envelope every answer of `lens api` comes in, the original's `{meta: {code, message}, data,
tracing}` (REFERENCE.md 1.3), and its meta codes."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, Field

T = TypeVar("T")

# meta.code values, the original's (REFERENCE.md 1.3); the HTTP status says the same.
OK = 2000
PARAMETER_INVALID = 4001
AUTH_FAILED = 4003
PERMISSION_DENY = 4005
NOT_FOUND = 4004
INVALID_OPERATION = 4016
INTERNAL_ERROR = 5000
DATABASE_ERROR = 5002
REMOTE_SERVICE_ERROR = 8001  # what the API relies on (the token file, the API server)


class Meta(BaseModel):
    code: int = Field(description="2000 on success; else the original's error code.")
    message: str


class Envelope(BaseModel, Generic[T]):
    """Every answer: `data` on success (meta.code 2000), null on an error."""

    meta: Meta
    data: T
    tracing: None = None


class ErrorEnvelope(BaseModel):
    """An error: the HTTP status is the real one (400, 401, 404, 503...), meta says why."""

    meta: Meta
    data: None = None
    tracing: None = None
