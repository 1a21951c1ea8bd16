"""HostFiles reads under a root: absent attributes are None, unreadable ones are errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lens.devices.sysfs import HostFiles, ReadError, parse_int, parse_key_values


def test_paths_are_host_paths_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "sys/class/x").mkdir(parents=True)
    (tmp_path / "sys/class/x/value").write_text("42\n")
    host = HostFiles(tmp_path)
    assert host.read_text("/sys/class/x/value") == "42"
    assert host.read_bytes("sys/class/x/value") == b"42\n"
    assert host.list("/sys/class/x") == ["value"]
    assert host.exists("/sys/class/x/value")
    assert host.path("/sys/class") == tmp_path / "sys/class"


def test_missing_files_and_directories_are_absent_not_errors(tmp_path: Path) -> None:
    host = HostFiles(tmp_path)
    assert host.read_text("/sys/nothing") is None
    assert host.list("/sys/nothing") == []
    assert host.link_target("/sys/nothing") is None
    assert host.resolve_name("/sys/nothing") is None
    assert not host.exists("/sys/nothing")


def test_links_resolve_to_their_target_name(tmp_path: Path) -> None:
    (tmp_path / "devices/0000:0c:00.0").mkdir(parents=True)
    os.symlink("devices/0000:0c:00.0", tmp_path / "link")
    host = HostFiles(tmp_path)
    assert host.link_target("/link") == "devices/0000:0c:00.0"
    assert host.resolve_name("/link") == "0000:0c:00.0"


def test_a_directory_read_as_a_file_is_a_read_error(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(ReadError, match="/dir: Is a directory"):
        HostFiles(tmp_path).read_text("/dir")


def test_large_files_are_read_whole(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 200_000)
    assert len(HostFiles(tmp_path).read_bytes("/big") or b"") == 200_000


@pytest.mark.parametrize(
    ("text", "value"),
    [("42", 42), ("0x1002", 4098), ("-1", -1), ("", None), (None, None), ("N/A", None)],
)
def test_parse_int(text: str | None, value: int | None) -> None:
    assert parse_int(text) == value


def test_parse_key_values() -> None:
    uevent = "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:0c:00.0\nbroken line\n"
    assert parse_key_values(uevent) == {"DRIVER": "amdgpu", "PCI_SLOT_NAME": "0000:0c:00.0"}
    assert parse_key_values("ue: 3\nce: 12", ":") == {"ue": "3", "ce": "12"}
    assert parse_key_values(None) == {}
