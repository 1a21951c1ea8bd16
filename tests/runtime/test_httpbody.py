from __future__ import annotations

import io
from http import HTTPStatus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime.httpbody import BodyError, read_body


def _read(headers: dict[str, str], data: bytes, max_bytes: int = 100) -> bytes:
    return read_body(headers, io.BufferedReader(io.BytesIO(data)), max_bytes=max_bytes)


def _refused(headers: dict[str, str], data: bytes, max_bytes: int = 100) -> BodyError:
    with pytest.raises(BodyError) as caught:
        _read(headers, data, max_bytes)
    return caught.value


def test_a_body_of_its_content_length_is_read_and_no_more() -> None:
    assert _read({"Content-Length": "3"}, b"abcGET / HTTP/1.1") == b"abc"
    assert _read({"content-length": " 0 "}, b"") == b""


def test_a_length_over_the_limit_is_413_before_reading() -> None:
    error = _refused({"Content-Length": "101"}, b"")
    assert error.status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert str(error) == "body of 101 bytes is over the limit of 100"


@pytest.mark.parametrize("length", ["-1", "1e3", "0x10", "", "٣", "1 2"])
def test_a_length_that_is_no_length_is_400(length: str) -> None:
    error = _refused({"Content-Length": length}, b"abc")
    assert error.status == HTTPStatus.BAD_REQUEST
    assert "is no length" in str(error)


def test_no_length_is_411_and_a_short_body_is_400() -> None:
    assert _refused({}, b"abc").status == HTTPStatus.LENGTH_REQUIRED
    error = _refused({"Content-Length": "5"}, b"abc")
    assert (error.status, str(error)) == (HTTPStatus.BAD_REQUEST, "body ended after 3 of 5 bytes")


def test_a_chunked_body_is_joined_with_extensions_and_trailers_ignored() -> None:
    data = b"3;name=x\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: 1\r\n\r\nNEXT"
    assert _read({"Transfer-Encoding": "chunked"}, data) == b"abc0123456789"


def test_a_chunked_body_over_the_limit_is_413() -> None:
    data = b"40\r\n" + b"x" * 64 + b"\r\n40\r\n" + b"x" * 64 + b"\r\n0\r\n\r\n"
    assert _refused({"Transfer-Encoding": "chunked"}, data).status == 413


@pytest.mark.parametrize(
    "data",
    [b"zz\r\nabc\r\n0\r\n\r\n", b"3\r\nabcX\r\n0\r\n\r\n", b"3\r\nab", b"-3\r\n", b"3" * 2000],
)
def test_a_chunked_body_framed_wrongly_is_400(data: bytes) -> None:
    assert _refused({"Transfer-Encoding": "chunked"}, data).status == HTTPStatus.BAD_REQUEST


def test_another_transfer_coding_is_501() -> None:
    error = _refused({"Transfer-Encoding": "gzip, chunked"}, b"")
    assert error.status == HTTPStatus.NOT_IMPLEMENTED


@given(
    headers=st.dictionaries(
        st.sampled_from(["Content-Length", "Transfer-Encoding", "X"]), st.text(max_size=12)
    ),
    data=st.binary(max_size=200),
)
def test_any_framing_is_a_body_or_a_body_error(headers: dict[str, str], data: bytes) -> None:
    try:
        body = _read(headers, data)
    except BodyError as error:
        assert 400 <= error.status < 600
    else:
        assert len(body) <= 100
