"""Bodies of fluent-bit's http output (json, json_lines, json_stream) and Vector's http sink
(JSON array, newline-delimited) into log records; hostile bodies give a RecordsError, never
another exception."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs import records
from lens.telemetry.trainlogs.records import LogRecord, RecordLimits, RecordsError

UID = "6f1c2a9e-3b7d-4c55-9a0e-1d2f3e4a5b6c"
LINE = " [2026-08-22 12:00:01.482113] iteration      100/   10000 | consumed samples: 6400 |"
RECEIVED = 1787400100.0

# fluent-bit, tail + kubernetes filter, `format json` (../shared/formats/remote-write.md 4).
FLUENT_BIT = {
    "date": 1787400001.482113,
    "time": "2026-08-22T12:00:01.482113456Z",
    "stream": "stdout",
    "logtag": "F",
    "log": LINE,
    "kubernetes": {
        "pod_name": "llama-train-0",
        "namespace_name": "ml",
        "pod_id": UID,
        "labels": {"app": "trainer"},
        "host": "gpu-node-07",
        "pod_ip": "10.128.3.17",
        "container_name": "trainer",
        "docker_id": "3f9a0c5e",
    },
}
# Vector, kubernetes_logs source, http sink with the json codec.
VECTOR = {
    "file": f"/var/log/pods/ml_llama-train-0_{UID}/trainer/0.log",
    "kubernetes": {
        "container_image": "registry.example.com/train:v1.2",
        "container_name": "trainer",
        "pod_labels": {"app": "trainer"},
        "pod_name": "llama-train-0",
        "pod_namespace": "ml",
        "pod_node_name": "gpu-node-07",
        "pod_uid": UID,
    },
    "message": LINE,
    "source_type": "kubernetes_logs",
    "stream": "stdout",
    "timestamp": "2026-08-22T12:00:01.482113456Z",
}
EXPECTED = LogRecord(
    line=LINE,
    at=1787400001.482113,
    pod_uid=UID,
    pod_name="llama-train-0",
    namespace="ml",
    node="gpu-node-07",
    container="trainer",
)


def parse(body: bytes, **options: object) -> records.ParsedBody:
    return records.parse_body(body, received_at=RECEIVED, **options)  # type: ignore[arg-type]


def test_fluent_bit_json_array() -> None:
    parsed = parse(json.dumps([FLUENT_BIT, FLUENT_BIT]).encode())
    assert parsed.records == (EXPECTED, EXPECTED)
    assert parsed.skipped == {}


def test_fluent_bit_json_lines_and_json_stream() -> None:
    one = json.dumps(FLUENT_BIT)
    assert parse(f"{one}\n{one}\n".encode()).records == (EXPECTED, EXPECTED)
    assert parse(f"{one}{one}".encode()).records == (EXPECTED, EXPECTED)


def test_vector_array_and_newline_delimited_with_nanoseconds() -> None:
    vector = EXPECTED.__class__(
        **{**_fields(EXPECTED), "at": float("1787400001.482113456")},
    )
    assert parse(json.dumps([VECTOR]).encode()).records == (vector,)
    ndjson = "\n".join(json.dumps(VECTOR) for _ in range(3))
    assert parse(ndjson.encode()).records == (vector,) * 3


def test_vector_flattened_metadata_keys() -> None:
    flat = {k: v for k, v in VECTOR.items() if k != "kubernetes"}
    flat.update({f"kubernetes.{k}": v for k, v in VECTOR["kubernetes"].items()})  # type: ignore[attr-defined]
    found = parse(json.dumps([flat]).encode()).records
    assert [(r.pod_uid, r.namespace, r.node, r.container) for r in found] == [
        (UID, "ml", "gpu-node-07", "trainer")
    ]


def test_message_before_log_and_docker_newline_removed() -> None:
    record = {**FLUENT_BIT, "log": "from log\n", "message": "from message\n"}
    assert parse(json.dumps([record]).encode()).records[0].line == "from message"
    record = {**FLUENT_BIT, "log": "docker line\n"}
    assert parse(json.dumps([record]).encode()).records[0].line == "docker line"


def test_time_falls_back_through_the_keys_then_to_the_receipt() -> None:
    no_date = {k: v for k, v in FLUENT_BIT.items() if k != "date"}
    assert parse(json.dumps([no_date]).encode()).records[0].at == float("1787400001.482113456")
    bad_date = {**FLUENT_BIT, "date": "soon"}
    assert parse(json.dumps([bad_date]).encode()).records[0].at == float("1787400001.482113456")
    timeless = {k: v for k, v in FLUENT_BIT.items() if k not in ("date", "time")}
    assert parse(json.dumps([timeless]).encode()).records[0].at == RECEIVED


def test_records_without_pod_are_skipped_and_counted() -> None:
    body = [
        {"date": 1.0, "log": "systemd journal line", "_TRANSPORT": "journal"},
        {**FLUENT_BIT, "kubernetes": {"pod_name": "x", "namespace_name": "ml"}},
        {**FLUENT_BIT, "kubernetes": {**FLUENT_BIT["kubernetes"], "pod_id": "u" * 65}},  # type: ignore[dict-item]
        {**FLUENT_BIT, "log": ""},
        {**FLUENT_BIT, "log": "x" * 100},
        FLUENT_BIT,
    ]
    parsed = parse(json.dumps(body).encode(), limits=RecordLimits(max_line=50))
    assert parsed.records == ()
    assert parsed.skipped == {
        "no_kubernetes": 1,
        "no_pod_uid": 2,
        "no_line": 1,
        "line_too_long": 2,
    }


def test_gzip_bodies_are_decompressed() -> None:
    body = json.dumps([FLUENT_BIT]).encode()
    assert parse(gzip.compress(body), content_encoding="gzip").records == (EXPECTED,)
    two = gzip.compress(body[:-1] + b",") + gzip.compress(json.dumps(FLUENT_BIT).encode() + b"]")
    assert parse(two, content_encoding="GZIP").records == (EXPECTED, EXPECTED)


@pytest.mark.parametrize(
    ("body", "encoding", "message"),
    [
        (b"not json", "", "expected a JSON array or object at character 0"),
        (b"[{]", "", "malformed JSON"),
        (b"42", "", "expected a JSON array or object"),
        (b'[{"log": "x"}, 3]', "", "record 1 is not a JSON object"),
        (b'{"log": "x"} trailing', "", "expected a JSON array or object at character 13"),
        (b"\xff\xfe[]", "", "not UTF-8"),
        (b"[]", "br", "Content-Encoding 'br' is not gzip"),
        (b"plain", "gzip", "not gzip"),
        (gzip.compress(b"[]", mtime=0)[:-4], "gzip", "gzip body ends early"),
        (gzip.compress(b" " * 5000, mtime=0), "gzip", "more than 1000 bytes once decompressed"),
        (b"[" + b"{}," * 20 + b"{}]", "", "more than 10 records"),
    ],
)
def test_bodies_that_are_no_records_raise_a_lens_error(
    body: bytes, encoding: str, message: str
) -> None:
    with pytest.raises(RecordsError, match=message.replace("(", r"\(")):
        parse(body, content_encoding=encoding, limits=RecordLimits(max_records=10, max_bytes=1000))


def test_deep_nesting_raises_a_lens_error() -> None:
    with pytest.raises(RecordsError, match="JSON nested too deeply"):
        parse(b"[" * 100_000)


def test_an_unsupported_encoding_is_its_own_error() -> None:
    with pytest.raises(records.UnsupportedEncoding):
        parse(b"[]", content_encoding="zstd")


def test_empty_bodies_hold_no_records() -> None:
    for body in (b"", b"[]", b" \n", b"[]\n[]"):
        assert parse(body).records == ()


@given(st.binary(max_size=300), st.sampled_from(["", "gzip"]))
def test_any_bytes_give_records_or_a_records_error(body: bytes, encoding: str) -> None:
    try:
        parsed = parse(body, content_encoding=encoding)
    except RecordsError as exc:
        assert str(exc)
    else:
        assert all(record.pod_uid for record in parsed.records)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=20,
)
_RECORDISH = st.fixed_dictionaries(
    {},
    optional={
        "log": _JSON,
        "message": _JSON,
        "date": _JSON,
        "timestamp": _JSON,
        "kubernetes": st.fixed_dictionaries(
            {}, optional={"pod_id": _JSON, "pod_uid": _JSON, "host": _JSON, "pod_name": _JSON}
        )
        | _JSON,
    },
)


@given(st.one_of(_JSON, st.lists(_RECORDISH, max_size=5), _RECORDISH))
def test_any_json_gives_records_or_a_records_error(value: object) -> None:
    try:
        parsed = parse(json.dumps(value).encode())
    except RecordsError:
        return
    for record in parsed.records:
        assert record.pod_uid and isinstance(record.line, str) and record.at > 0


def _fields(record: LogRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}
