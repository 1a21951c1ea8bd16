"""A body posted to `lens jobs` at /v1/logs into log records: fluent-bit's http output (`format
json`: a JSON array; `json_lines`/`json_stream`: objects one after another) with its kubernetes
filter's metadata, and Vector's http sink (JSON array or newline-delimited) with its
kubernetes_logs source's (../shared/formats/remote-write.md section 4). Bodies compressed with
gzip are decompressed here. The intake (intake.py) queues what `parse_body` returns."""

from __future__ import annotations

import dataclasses
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping

from lens.runtime import errors
from lens.telemetry.trainlogs import recordtimes

# Where each collector puts a record's time, most precise first: fluent-bit's json_date_key
# (`date` unless configured), Vector's `timestamp`, the CRI/Docker `time`, a common date key.
_TIME_KEYS = ("date", "timestamp", "time", "@timestamp")
# Kubernetes metadata: fluent-bit's kubernetes filter names first, Vector's kubernetes_logs second.
_UID_KEYS = ("pod_id", "pod_uid")
_NAMESPACE_KEYS = ("namespace_name", "pod_namespace")
_NODE_KEYS = ("host", "pod_node_name")
_UID_MAX = 64  # what workload_pod_references.pod_uid holds; a Kubernetes UID has 36
_NAME_MAX = 253
_BLANK = re.compile(r"[ \t\r\n]*")


class RecordsError(errors.PermanentError):
    """A body that is no log records (answer 400); the message says what was wrong."""


class UnsupportedEncoding(RecordsError):
    """A Content-Encoding other than gzip or identity (answer 415)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RecordLimits:
    """Bounds on one body."""

    max_records: int = 100_000  # a fluent-bit chunk holds a few thousand
    max_line: int = 16_384  # characters; no iteration line is longer (trainlogs/text.py)
    max_bytes: int = 16 * 1024 * 1024  # after decompression; a fluent-bit chunk is ~2 MB


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LogRecord:
    """One line a container wrote, with the pod it came from."""

    line: str
    at: float  # Unix seconds the collector stamped it with (the time it was received if none)
    pod_uid: str
    pod_name: str
    namespace: str
    node: str
    container: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ParsedBody:
    """A body's records, and how many it held that were skipped, by reason (no_line,
    no_kubernetes, no_pod_uid, line_too_long)."""

    records: tuple[LogRecord, ...]
    skipped: Mapping[str, int]


def parse_body(
    body: bytes,
    *,
    received_at: float,
    content_encoding: str = "",
    limits: RecordLimits | None = None,
) -> ParsedBody:
    """The records of `body`; RecordsError when it is no log records (not JSON, not objects,
    too many, not gzip as its Content-Encoding says)."""
    limits = limits or RecordLimits()
    data = _decoded(body, content_encoding.strip().lower(), limits.max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordsError(f"body is not UTF-8 (byte {exc.start})") from exc
    records: list[LogRecord] = []
    skipped: Counter[str] = Counter()
    for count, value in enumerate(_objects(text), start=1):
        if count > limits.max_records:
            raise RecordsError(f"more than {limits.max_records} records in one body")
        found = _record(value, received_at, limits.max_line)
        if isinstance(found, str):
            skipped[found] += 1
        else:
            records.append(found)
    return ParsedBody(records=tuple(records), skipped=dict(skipped))


def _decoded(body: bytes, encoding: str, max_bytes: int) -> bytes:
    if encoding in ("", "identity"):
        if len(body) > max_bytes:
            raise RecordsError(f"body of more than {max_bytes} bytes")
        return body
    if encoding in ("gzip", "x-gzip"):
        return _gunzip(body, max_bytes)
    raise UnsupportedEncoding(f"Content-Encoding {encoding[:40]!r} is not gzip or identity")


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """Every gzip member of `data`, at most `max_bytes` of them (a small body may inflate a
    thousandfold)."""
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(rest, max_bytes + 1 - len(out))
        except zlib.error as exc:
            raise RecordsError(f"body is not gzip: {exc}") from exc
        if len(out) > max_bytes:
            raise RecordsError(f"body of more than {max_bytes} bytes once decompressed")
        if not inflater.eof:
            raise RecordsError("gzip body ends early")
        rest = inflater.unused_data
    return bytes(out)


def _objects(text: str) -> Iterator[object]:
    """The records of a JSON array, or of JSON objects one after another (newline-delimited or
    not); RecordsError for anything else."""
    decoder = json.JSONDecoder()
    position = _after_blanks(text, 0)
    while position < len(text):
        if text[position] not in "[{":
            raise RecordsError(
                f"expected a JSON array or object at character {position}, found "
                f"{text[position : position + 20]!r}"
            )
        value, position = _decode(decoder, text, position)
        if isinstance(value, list):
            for number, element in enumerate(value):
                if not isinstance(element, dict):
                    raise RecordsError(f"record {number} is not a JSON object")
                yield element
        else:
            yield value
        position = _after_blanks(text, position)


def _after_blanks(text: str, position: int) -> int:
    blanks = _BLANK.match(text, position)
    return position if blanks is None else blanks.end()


def _decode(decoder: json.JSONDecoder, text: str, position: int) -> tuple[object, int]:
    try:
        return decoder.raw_decode(text, position)
    except json.JSONDecodeError as exc:
        raise RecordsError(f"malformed JSON: {exc.msg} at character {exc.pos}") from exc
    except RecursionError as exc:
        raise RecordsError("JSON nested too deeply") from exc
    except ValueError as exc:  # an integer of more digits than CPython converts
        raise RecordsError("a number too long to read") from exc


def _record(value: object, received_at: float, max_line: int) -> LogRecord | str:
    """The record `value` holds, or why it is skipped."""
    if not isinstance(value, dict):
        raise RecordsError("a record is not a JSON object")
    line = _line(value)
    if line is None:
        return "no_line"
    kubernetes = _kubernetes(value)
    if kubernetes is None:
        return "no_kubernetes"
    uid = _first_text(kubernetes, _UID_KEYS)
    if not uid or len(uid) > _UID_MAX:
        return "no_pod_uid"
    if len(line) > max_line:
        return "line_too_long"
    return LogRecord(
        line=line,
        at=_time(value, received_at),
        pod_uid=uid,
        pod_name=_first_text(kubernetes, ("pod_name",))[:_NAME_MAX],
        namespace=_first_text(kubernetes, _NAMESPACE_KEYS)[:_NAME_MAX],
        node=_first_text(kubernetes, _NODE_KEYS)[:_NAME_MAX],
        container=_first_text(kubernetes, ("container_name",))[:_NAME_MAX],
    )


def _line(record: Mapping[str, object]) -> str | None:
    """The line: `message` (Vector, CRI parsers), else `log` (tail, Docker), as the original;
    without the newline Docker's json-file keeps."""
    for key in ("message", "log"):
        line = record.get(key)
        if isinstance(line, str) and line:
            return line[:-1] if line.endswith("\n") else line
    return None


def _kubernetes(record: Mapping[str, object]) -> Mapping[str, object] | None:
    """The pod's metadata: a `kubernetes` object, or Vector's flattened `kubernetes.*` keys."""
    nested = record.get("kubernetes")
    if isinstance(nested, dict):
        return nested
    flat = {
        key[len("kubernetes.") :]: value
        for key, value in record.items()
        if key.startswith("kubernetes.")
    }
    return flat or None


def _first_text(metadata: Mapping[str, object], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _time(record: Mapping[str, object], received_at: float) -> float:
    for key in _TIME_KEYS:
        if key in record:
            at = recordtimes.seconds(record[key])
            if at is not None:
                return at
    return received_at
