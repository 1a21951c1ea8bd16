"""Prometheus remote write on the HTTP level: which message a Content-Type names, the snappy
block body, the errors a receiver answers with (415, 400), and the shapes the rewriting
modules (rewriting.py, v1.py, v2.py) share: label sets, the relabelling seam, the result.
Sources: prometheus/docs docs/specs/prw/remote_write_spec.md and remote_write_spec_2_0.md."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Protocol

import cramjam

from lens.runtime.errors import LensError


class Version(enum.Enum):
    """The protobuf message of a request: 1.0's prometheus.WriteRequest or 2.0's
    io.prometheus.write.v2.Request."""

    V1 = "1.0"
    V2 = "2.0"


CONTENT_TYPE_V1 = "application/x-protobuf"
CONTENT_TYPE_V2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request"
_MEDIA_TYPE = "application/x-protobuf"
_MESSAGES = {"prometheus.WriteRequest": Version.V1, "io.prometheus.write.v2.Request": Version.V2}
# RFC 9110 5.6.2: token characters.
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_QUOTED_PAIR = re.compile(r"\\(.)", re.DOTALL)
_SNAPPY_HEADER_MAX = 5  # a 32-bit varint


class UnsupportedMediaType(LensError):
    """The Content-Type or Content-Encoding is none this receiver reads (HTTP 415)."""


class BadRequest(LensError):
    """The body is no valid request: not snappy, too large, not the message (HTTP 400)."""


Labels = tuple[tuple[str, str], ...]
"""A label set: (name, value) pairs sorted bytewise by name, no name twice, no empty value."""


class Relabeler(Protocol):
    """Says what labels a series gets; the rewriter caches its answers per label set."""

    def generation(self) -> int:
        """Changes whenever relabel() may answer differently. Change it after the new answers
        are in place: a rewrite that reads a generation caches answers under it."""
        ...

    def relabel(self, labels: Labels) -> Labels | None:
        """The series' new full label set, or None to keep `labels` as they are."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewritten:
    """A rewritten request: its uncompressed body in the output version, and what it holds.
    `samples`, `histograms` and `exemplars` are the figures of 2.0's
    X-Prometheus-Remote-Write-*-Written headers. `dropped` counts what the output version
    cannot carry (v2.py says what)."""

    body: bytes
    series: int
    samples: int
    histograms: int
    exemplars: int
    relabelled: int
    dropped: int = 0


def version_of(content_type: str | None) -> Version:
    """The message a Content-Type header names. No header means 1.0, as 1.0 senders and
    receivers assume; type, subtype and parameter names compare case-insensitively (RFC 9110
    8.3.1), a `proto` value exactly, other parameters are ignored."""
    if content_type is None or not content_type.strip():
        return Version.V1
    media_type, *parameters = content_type.split(";")
    if media_type.strip().lower() != _MEDIA_TYPE:
        raise UnsupportedMediaType(f"unsupported Content-Type {content_type!r}: want {_MEDIA_TYPE}")
    protos = [value for name, value in map(_parameter, parameters) if name == "proto"]
    if not protos:
        return Version.V1
    if len(protos) == 1 and protos[0] in _MESSAGES:
        return _MESSAGES[protos[0]]
    raise UnsupportedMediaType(
        f"unsupported Content-Type {content_type!r}: proto must be one of {', '.join(_MESSAGES)}"
    )


def _parameter(text: str) -> tuple[str, str]:
    """(lowercased name, value unquoted) of one `name=value` media-type parameter."""
    name, equals, value = text.strip().partition("=")
    if not equals or not name or not set(name) <= _TCHAR:
        return ("", "")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = _QUOTED_PAIR.sub(r"\1", value[1:-1])
    return (name.lower(), value)


def decompress(body: bytes, content_encoding: str | None, *, max_bytes: int) -> bytes:
    """The uncompressed body of a request. Both versions use the snappy block format; no
    Content-Encoding means snappy too (as Prometheus's own receiver reads 1.0 senders that
    leave it out). Any other encoding is UnsupportedMediaType (2.0: 415 for an unsupported
    encoding). A body whose snappy header announces more than `max_bytes` is refused before
    anything is decoded."""
    encoding = (content_encoding or "snappy").strip().lower()
    if encoding != "snappy":
        raise UnsupportedMediaType(
            f"unsupported Content-Encoding {content_encoding!r}: want snappy"
        )
    size = _decoded_size(body)
    if size > max_bytes:
        raise BadRequest(f"body decompresses to {size} bytes, more than the limit of {max_bytes}")
    try:
        return bytes(cramjam.snappy.decompress_raw(body))
    except cramjam.DecompressionError as exc:
        raise BadRequest(f"body is not snappy block data: {exc}") from exc


def _decoded_size(body: bytes) -> int:
    """The uncompressed length a snappy block announces in its leading varint."""
    size = 0
    for index, byte in enumerate(body[:_SNAPPY_HEADER_MAX]):
        size |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            return size
    raise BadRequest("body is not snappy block data: no length header")


def compress(raw: bytes) -> bytes:
    """`raw` as a snappy block, the body remote write sends."""
    return bytes(cramjam.snappy.compress_raw(raw))
