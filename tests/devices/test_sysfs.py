"""HostFiles reads under a root: absent attributes are None, unreadable ones are errors."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def test_kept_files_see_values_written_in_place(tmp_path: Path) -> None:
    from lens.sim.hosts import files

    files.write(tmp_path / "counter", "12345\n")
    host = HostFiles(tmp_path, keep_open=True)
    assert host.read_text("/counter") == "12345" and host.open_files == 1
    files.write(tmp_path / "counter", "99\n")
    assert host.read_text("/counter") == "99", "the same descriptor, read again from 0"
    assert host.read_text("/absent") is None and host.open_files == 1
    host.close()
    assert host.open_files == 0


def test_sweep_closes_files_no_longer_read(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).write_text("1\n")
    host = HostFiles(tmp_path, keep_open=True)
    host.read_text("/a")
    host.read_text("/b")
    host.sweep()
    assert host.open_files == 2
    host.read_text("/a")
    host.sweep()
    assert host.open_files == 1, "b was not read since the last sweep"
    host.sweep()
    assert host.open_files == 0


def test_a_descriptor_of_a_removed_device_is_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "value").write_text("7\n")
    host = HostFiles(tmp_path, keep_open=True)
    assert host.read_text("/value") == "7"
    real_pread = os.pread
    failures = [errno.ENODEV]

    def pread(fd: int, size: int, offset: int) -> bytes:
        if failures:  # what sysfs answers on a descriptor whose device was removed
            raise OSError(failures.pop(), os.strerror(errno.ENODEV))
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", pread)
    (tmp_path / "value").unlink()
    (tmp_path / "value").write_text("8\n")
    assert host.read_text("/value") == "8"
    failures.append(errno.ENODEV)
    (tmp_path / "value").unlink()
    assert host.read_text("/value") is None, "gone for good"


def test_running_out_of_descriptors_falls_back_to_plain_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_text("1\n")
    (tmp_path / "b").write_text("2\n")
    host = HostFiles(tmp_path, keep_open=True)
    assert host.read_text("/a") == "1"
    real_open = os.open

    def open_once_refused(path: str, flags: int, *args: int) -> int:
        monkeypatch.setattr(os, "open", real_open)
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(os, "open", open_once_refused)
    assert host.read_text("/b") == "2"
    assert host.open_files == 0, "kept descriptors are given back"


@pytest.mark.parametrize(
    "text", ["9" * 400, str(2**64), str(-(2**63) - 1), "0x1" + "0" * 16, "²", "1" * 100]
)
def test_an_integer_wider_than_64_bits_is_no_number(text: str) -> None:
    # Issue 16, point 10: such a value was kept, then no float could hold it when rendered.
    assert parse_int(text) is None
    assert parse_int(str(2**64 - 1)) == 2**64 - 1 and parse_int(str(-(2**63))) == -(2**63)


@given(st.one_of(st.text(), st.integers().map(str), st.integers().map(hex)))
def test_any_text_is_a_64_bit_integer_or_none(text: str) -> None:
    value = parse_int(text)
    assert value is None or -(2**63) <= value < 2**64
    if value is not None:
        float(value)


@given(st.text(), st.sampled_from(["=", ":", " "]))
def test_any_text_is_key_value_pairs(text: str, separator: str) -> None:
    pairs = parse_key_values(text, separator)
    assert all(key == key.strip() and value == value.strip() for key, value in pairs.items())
