"""A request body read from a connection, bounded: by Content-Length or chunked transfer coding
(RFC 9112 6, 7.1), never more than a maximum, each read within the connection's read timeout.

Senders of telemetry (Prometheus remote write, fluent-bit, Vector) post bodies of a few hundred
KB; the bound keeps one client from filling the process's memory.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping
from http import HTTPStatus

# A chunk-size line: hex digits, optional extensions; longer than this is no honest client's.
_MAX_CHUNK_LINE = 1024
_MAX_TRAILER_LINES = 64


@dataclasses.dataclass(frozen=True, slots=True)
class BodyError(Exception):
    """A body that cannot be read: the status to answer and why. The connection must close
    afterwards, as the rest of the body may still be on the wire."""

    status: HTTPStatus
    reason: str

    def __str__(self) -> str:
        return self.reason


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header `name` (lower case), whatever its case in `headers`: HTTP field names
    are case-blind."""
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def read_body(headers: Mapping[str, str], stream: io.BufferedIOBase, *, max_bytes: int) -> bytes:
    """The body announced by `headers`, read from `stream`; BodyError when it is too large
    (413), has no length (411), is framed wrongly (400) or stops early (400)."""
    coding = header(headers, "transfer-encoding")
    if coding is not None:
        if coding.strip().lower() != "chunked":
            raise BodyError(HTTPStatus.NOT_IMPLEMENTED, f"transfer coding {coding!r} not supported")
        return _read_chunked(stream, max_bytes=max_bytes)
    length_text = header(headers, "content-length")
    if length_text is None:
        raise BodyError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
    length_text = length_text.strip()
    if not length_text.isdigit() or not length_text.isascii():
        raise BodyError(HTTPStatus.BAD_REQUEST, f"Content-Length {length_text!r} is no length")
    length = int(length_text)
    if length > max_bytes:
        raise BodyError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"body of {length} bytes is over the limit of {max_bytes}",
        )
    return _read_exactly(stream, length)


def _read_exactly(stream: io.BufferedIOBase, length: int) -> bytes:
    try:
        data = stream.read(length)
    except OSError as exc:  # TimeoutError: the client stopped sending
        raise BodyError(HTTPStatus.BAD_REQUEST, f"body not received: {exc}") from None
    if len(data) != length:
        raise BodyError(HTTPStatus.BAD_REQUEST, f"body ended after {len(data)} of {length} bytes")
    return data


def _read_line(stream: io.BufferedIOBase) -> bytes:
    try:
        line = stream.readline(_MAX_CHUNK_LINE + 1)
    except OSError as exc:
        raise BodyError(HTTPStatus.BAD_REQUEST, f"body not received: {exc}") from None
    if len(line) > _MAX_CHUNK_LINE or not line.endswith(b"\n"):
        raise BodyError(HTTPStatus.BAD_REQUEST, "chunked body: a line is too long or cut off")
    return line


def _read_chunked(stream: io.BufferedIOBase, *, max_bytes: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_text = _read_line(stream).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BodyError(
                HTTPStatus.BAD_REQUEST, f"chunked body: chunk size {size_text!r} is no number"
            ) from None
        if size < 0 or not size_text.isalnum():
            raise BodyError(HTTPStatus.BAD_REQUEST, f"chunked body: chunk size {size_text!r}")
        if size == 0:
            break
        total += size
        if total > max_bytes:
            raise BodyError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"chunked body is over the limit of {max_bytes} bytes",
            )
        parts.append(_read_exactly(stream, size))
        if _read_line(stream).strip():
            raise BodyError(HTTPStatus.BAD_REQUEST, "chunked body: no line end after a chunk")
    for _ in range(_MAX_TRAILER_LINES):  # trailer fields are read and ignored
        if not _read_line(stream).strip():
            return b"".join(parts)
    raise BodyError(HTTPStatus.BAD_REQUEST, "chunked body: too many trailer lines")
