"""The kubelet client: verified TLS, a rotating bearer token, timeouts and clear errors."""

from __future__ import annotations

import dataclasses
import os
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.kube.kubelet.client import KubeletClient, parse_body
from lens.runtime import errors
from lens.runtime.config import KubeletConfig

from ..conftest import Kubelet


def test_pods_and_summary_over_verified_tls(kubelet: Kubelet) -> None:
    kubelet.add_pod("trainer-0", {"containers": [{"name": "main"}]})
    client = KubeletClient(kubelet.config)
    pods = client.get_json("/pods")
    assert isinstance(pods, dict) and pods["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in pods["items"]] == ["trainer-0"]
    summary = client.get_json("/stats/summary")
    assert isinstance(summary, dict) and summary["node"]["nodeName"] == "gpu-node-1"


def test_a_rotated_token_is_picked_up(kubelet: Kubelet) -> None:
    client = KubeletClient(kubelet.config)
    client.get_json("/pods")
    kubelet.server.set_token("rotated")
    kubelet.token_file.write_text("rotated\n")
    client.get_json("/pods")


def test_a_token_rotated_without_a_visible_change_is_retried_once(kubelet: Kubelet) -> None:
    client = KubeletClient(kubelet.config)
    client.get_json("/pods")
    kubelet.server.set_token("rotat3d")
    stamp = os.stat(kubelet.token_file)
    kubelet.token_file.write_text("rotat3d\n")  # same size; mtime put back below
    os.utime(kubelet.token_file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    client.get_json("/pods")


def test_a_refused_token_is_forbidden(kubelet: Kubelet) -> None:
    kubelet.token_file.write_text("wrong\n")
    with pytest.raises(errors.Forbidden, match="kubelet /pods: HTTP 401"):
        KubeletClient(kubelet.config).get_json("/pods")


def test_an_unknown_ca_is_refused(kubelet: Kubelet, tmp_path: Path) -> None:
    config = dataclasses.replace(kubelet.config, ca_file="")
    with pytest.raises(errors.SourceError, match="CERTIFICATE_VERIFY_FAILED"):
        KubeletClient(config).get_json("/pods")
    insecure = dataclasses.replace(config, insecure_skip_tls_verify=True)
    assert isinstance(KubeletClient(insecure).get_json("/pods"), dict)


def test_a_missing_ca_file_is_a_config_error(kubelet: Kubelet, tmp_path: Path) -> None:
    config = dataclasses.replace(kubelet.config, ca_file=str(tmp_path / "nope.pem"))
    with pytest.raises(errors.ConfigError, match=r"kubelet\.ca_file"):
        KubeletClient(config)


def test_not_found_and_unreachable(kubelet: Kubelet) -> None:
    with pytest.raises(errors.SourceError, match="HTTP 404"):
        KubeletClient(kubelet.config).get_json("/nothing")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    config = dataclasses.replace(kubelet.config, url=f"https://127.0.0.1:{port}")
    with pytest.raises(errors.SourceError, match="Connection refused"):
        KubeletClient(config).get_json("/pods")


def test_a_silent_kubelet_times_out(kubelet: Kubelet) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        config = dataclasses.replace(
            kubelet.config, url=f"https://127.0.0.1:{silent.getsockname()[1]}", timeout_seconds=0.3
        )
        with pytest.raises(errors.SourceError, match="timed out"):
            KubeletClient(config).get_json("/pods")


def test_no_url_is_no_data() -> None:
    with pytest.raises(errors.NoDataError, match=r"kubelet\.url"):
        KubeletClient(KubeletConfig())


# --- issue 16, point 10: any answer body is JSON or a SourceError --------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"items": ["caf\xe9"]}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"[" + b"9" * 5000 + b"]", "a number too long to read"),
        (b"{", "malformed JSON"),
    ],
)
def test_a_body_that_is_no_usable_json_is_a_source_error(body: bytes, message: str) -> None:
    # Each raised UnicodeDecodeError, RecursionError or ValueError: no Lens error, so the
    # collector's failure read as a crash.
    with pytest.raises(errors.SourceError, match=f"kubelet /pods: .*{message}"):
        parse_body(body, "/pods")


def test_a_body_with_a_byte_order_mark_is_read() -> None:
    assert parse_body(b'\xef\xbb\xbf{"kind": "PodList"}', "/pods") == {"kind": "PodList"}


@given(st.one_of(st.binary(), st.text().map(str.encode)))
def test_any_body_is_json_or_a_source_error(body: bytes) -> None:
    try:
        parse_body(body, "/stats/summary")
    except errors.SourceError as exc:
        assert str(exc).startswith("kubelet /stats/summary: ")
