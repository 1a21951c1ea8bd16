"""Binding a listening socket, and the ListenError naming what to change when it cannot be."""

from __future__ import annotations

import errno
import socket

import pytest

from lens.runtime import errors, listening

API = listening.Endpoint(purpose="the REST API", host_key="api.host", port_key="api.port")


def test_ipv6_loopback_is_bound_as_ipv6() -> None:
    sock = listening.bind("::1", 0, endpoint=API)
    try:
        assert sock.family == socket.AF_INET6
    finally:
        sock.close()


def test_a_port_in_use_names_the_port_setting_and_its_variable() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(errors.ListenError) as caught:
            listening.bind("127.0.0.1", port, endpoint=API)
    assert str(caught.value) == (
        f"cannot listen on 127.0.0.1:{port} for the REST API: the port is in use; "
        "choose another port with the api.port setting or LENS_API__PORT"
    )
    assert caught.value.describe("--api-port").endswith(
        "choose another port with --api-port, the api.port setting or LENS_API__PORT"
    )
    assert listening.bind_error("127.0.0.1", port, endpoint=API) is None, "free once let go"


def test_an_address_not_of_this_host_names_the_host_setting() -> None:
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a host's own address.
    with pytest.raises(errors.ListenError) as caught:
        listening.bind("192.0.2.1", 0, endpoint=API)
    assert caught.value.reason == "the address is not one of this host's"
    assert (caught.value.key, caught.value.env) == ("api.host", "LENS_API__HOST")
    assert "choose another address with the api.host setting" in str(caught.value)


def test_an_ipv6_address_is_written_in_brackets() -> None:
    # 2001:db8::/32 is for documentation (RFC 3849): never a host's own address.
    refused = listening.bind_error("2001:db8::1", 8080, endpoint=API)
    assert refused is not None and refused.address == "[2001:db8::1]:8080"


@pytest.mark.parametrize(
    ("error", "port", "reason", "key"),
    [
        (
            OSError(errno.EACCES, "Permission denied"),
            80,
            "permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)",
            "api.port",
        ),
        (OSError(errno.EACCES, "Permission denied"), 8080, "permission denied", "api.port"),
        (
            socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            8080,
            "the host name does not resolve (Name or service not known)",
            "api.host",
        ),
        (OSError(errno.EINVAL, "Invalid argument"), 8080, "invalid argument", "api.port"),
    ],
)
def test_why_a_bind_failed(error: OSError, port: int, reason: str, key: str) -> None:
    # Root binds any port, so a refused low port is told from its errno alone here.
    refused = listening.refused(error, host="0.0.0.0", port=port, endpoint=API)
    assert (refused.reason, refused.key, refused.port) == (reason, key, port)
