"""Answers in the original's envelope with real HTTP statuses (REFERENCE.md 1.3, 15.1): 200 and
meta.code 2000 for data; 400 naming the parameter, 401, 404, 503 and 500 for errors.

app.py installs `install_handlers` on the app; routers raise ParameterError and NotFoundError.
Error logs name the route and the error, never a header (where the token is) or a query value.
"""

from __future__ import annotations

import logging
from typing import TypeVar

import pydantic_core
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lens.roles.api.schemas import base as schemas
from lens.runtime import errors

log = logging.getLogger(__name__)

T = TypeVar("T")

_CODES = {
    400: schemas.PARAMETER_INVALID,
    401: schemas.AUTH_FAILED,
    403: schemas.PERMISSION_DENY,
    404: schemas.NOT_FOUND,
    405: schemas.INVALID_OPERATION,
}


class ParameterError(Exception):
    """A request parameter's value is refused: a 400 naming it."""

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(f"{parameter}: {problem}")
        self.parameter = parameter


class NotFoundError(Exception):
    """What the request names does not exist: a 404."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found")


def ok(data: T) -> schemas.Envelope[T]:
    return schemas.Envelope[T](meta=schemas.Meta(code=schemas.OK, message="OK"), data=data)


def ok_json(data: object) -> Response:
    """`data` (dicts, lists, strings and numbers shaped as the route's response model would
    dump them) answered in the envelope without the model: for answers of thousands of points,
    whose models cost more to build and check than the query that reads them. The same bytes
    FastAPI would send (pydantic's own JSON writer); tests compare the two."""
    body = {"meta": {"code": schemas.OK, "message": "OK"}, "data": data, "tracing": None}
    return Response(pydantic_core.to_json(body), media_type="application/json")


def error_response(status: int, message: str, *, code: int | None = None) -> JSONResponse:
    meta = schemas.Meta(code=code or _CODES.get(status, schemas.INTERNAL_ERROR), message=message)
    body = schemas.ErrorEnvelope(meta=meta)
    return JSONResponse(body.model_dump(), status_code=status)


def validation_message(exc: RequestValidationError) -> str:
    """The first problem, led by the parameter's name ("page_size: Input should be ...")."""
    for problem in exc.errors():
        where = [str(part) for part in problem.get("loc", ()) if part not in ("query", "path")]
        name = where[0] if where else "request"
        return f"{name}: {problem.get('msg', 'invalid value')}"
    return "request: invalid"


def _route(request: Request) -> str:
    route = request.scope.get("route")
    return str(getattr(route, "path", "other"))


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(400, validation_message(exc))


async def _parameter(_request: Request, exc: Exception) -> JSONResponse:
    return error_response(400, str(exc))


async def _not_found(_request: Request, exc: Exception) -> JSONResponse:
    return error_response(404, str(exc))


async def _http(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    message = "no such path" if exc.status_code == 404 else str(exc.detail)
    return error_response(exc.status_code, message)


async def _store(request: Request, exc: Exception) -> JSONResponse:
    log.warning("api request failed: database", extra={"route": _route(request), "error": str(exc)})
    return error_response(503, "the database is unavailable", code=schemas.DATABASE_ERROR)


def install_handlers(app: FastAPI) -> None:
    """Every error of the app answered in the envelope."""
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(ParameterError, _parameter)
    app.add_exception_handler(NotFoundError, _not_found)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(errors.StoreError, _store)


class ContainErrors:
    """ASGI middleware: an unexpected error of a request is logged once and answered 500 in the
    envelope (below Starlette's outermost handler, which would re-raise it to the server)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, receive, tracking)
        except Exception as exc:  # the unit of work is the request: contained, logged
            route = getattr(scope.get("route"), "path", "other")
            log.error(
                "api request failed",
                extra={"route": route, "error": f"{type(exc).__name__}: {exc}"},
                exc_info=exc,
            )
            if started:
                raise  # the answer is half sent: only dropping the connection is left
            await error_response(500, "internal error")(scope, receive, send)


# The error answers every /v1 route may give, for /openapi.json.
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    400: {"model": schemas.ErrorEnvelope, "description": "A parameter is invalid."},
    401: {"model": schemas.ErrorEnvelope, "description": "No valid bearer token."},
    403: {"model": schemas.ErrorEnvelope, "description": "The token's user is not let in."},
    503: {"model": schemas.ErrorEnvelope, "description": "The database is unavailable."},
}
NOT_FOUND_RESPONSE: dict[int | str, dict[str, object]] = {
    404: {"model": schemas.ErrorEnvelope, "description": "No such node."}
}
