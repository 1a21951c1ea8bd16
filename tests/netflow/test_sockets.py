from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import sockets
from lens.runtime import errors


def test_addresses_are_decoded_by_family() -> None:
    raw4 = bytes([10, 203, 0, 1]) + bytes(12)
    assert sockets.parse_address(sockets.AF_INET, raw4) == ipaddress.IPv4Address("10.203.0.1")
    raw6 = ipaddress.IPv6Address("fd00:203::2").packed
    assert sockets.parse_address(sockets.AF_INET6, raw6) == ipaddress.IPv6Address("fd00:203::2")


def test_an_ipv4_peer_of_a_dual_stack_socket_is_ipv4() -> None:
    mapped = ipaddress.IPv6Address("::ffff:192.168.1.7").packed
    assert sockets.parse_address(sockets.AF_INET6, mapped) == ipaddress.IPv4Address("192.168.1.7")


@pytest.mark.parametrize(
    ("family", "raw", "message"),
    [(1, bytes(16), "address family 1"), (sockets.AF_INET, bytes(4), "of 4 bytes")],
)
def test_bad_records_are_source_errors(family: int, raw: bytes, message: str) -> None:
    with pytest.raises(errors.SourceError, match=message):
        sockets.parse_address(family, raw)


def test_opened_codes() -> None:
    assert [sockets.parse_opened(code) for code in (0, 1, 2)] == ["here", "there", "unknown"]
    with pytest.raises(errors.SourceError, match="an opened code 7"):
        sockets.parse_opened(7)


@given(st.integers(min_value=0, max_value=65535), st.binary(max_size=20))
def test_any_record_is_an_address_or_a_source_error(family: int, raw: bytes) -> None:
    try:
        address = sockets.parse_address(family, raw)
    except errors.SourceError:
        return
    assert isinstance(address, ipaddress.IPv4Address | ipaddress.IPv6Address)
