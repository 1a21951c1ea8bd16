"""Conditional GETs for `lens api`: an ETag on every successful GET answer of /v1, and 304 Not
Modified when the client's If-None-Match already holds it, so a dashboard polling a large list
re-downloads it only when it changed.

The tag is a digest of the body (a page of a list is at most api.max_page_size rows, so holding
it whole is bounded). `Cache-Control: private, no-cache`: a client may keep an answer but asks
again each time, and no shared cache keeps an answer that may have needed a token.
"""

from __future__ import annotations

import hashlib

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CACHE_CONTROL = "private, no-cache"
PREFIX = "/v1/"


def entity_tag(body: bytes) -> str:
    """A weak tag of `body` (the same bytes, the same tag, on every replica): weak because gzip
    below may send the same answer in another content-coding, which a strong tag may not cover
    (RFC 9110 8.8.3)."""
    return 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str, tag: str) -> bool:
    """Whether an If-None-Match header names `tag` (weak or strong, RFC 9110 13.1.2) or `*`."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == tag.removeprefix("W/"):
            return True
    return False


class ConditionalGet:
    """ASGI middleware adding ETag and Cache-Control to 200 answers of GET /v1/...; a 304 when
    the request's If-None-Match matches."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") not in ("GET", "HEAD")
            or not str(scope.get("path", "")).startswith(PREFIX)
        ):
            await self._app(scope, receive, send)
            return
        if_none_match = Headers(scope=scope).get("if-none-match", "")
        start: Message | None = None
        chunks: list[bytes] = []

        async def holding(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if message["status"] != 200:
                    await send(message)  # errors pass as they are
                    return
                start = message
                return
            if start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await _answer(send, start, b"".join(chunks), if_none_match)

        await self._app(scope, receive, holding)


async def _answer(send: Send, start: Message, body: bytes, if_none_match: str) -> None:
    tag = entity_tag(body)
    headers = MutableHeaders(raw=list(start["headers"]))
    headers["etag"] = tag
    headers["cache-control"] = CACHE_CONTROL
    if if_none_match and matches(if_none_match, tag):
        for name in ("content-length", "content-type"):
            if name in headers:
                del headers[name]
        await send({"type": "http.response.start", "status": 304, "headers": headers.raw})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({**start, "headers": headers.raw})
    await send({"type": "http.response.body", "body": body})
