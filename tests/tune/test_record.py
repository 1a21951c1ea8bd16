from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.tune import record


def test_a_record_round_trips_bytes_modes_and_folders(tmp_path: Path) -> None:
    saved = record.Record(
        files={
            "etc/sysctl.d/99-lens.conf": record.FileBefore(content=None, mode=None),
            "etc/security/limits.d/99-lens.conf": record.FileBefore(
                content=b"\xff odd bytes\r\n", mode=0o600
            ),
        },
        sysctls={"vm.max_map_count": record.SysctlBefore(before="65530", written="262144")},
        dirs=["var/lib/lens", "var/lib/lens/tune"],
    )
    path = tmp_path / "record.json"
    record.save(saved, path)
    assert record.load(path) == saved
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # no temporary left


def test_no_record_is_an_empty_one(tmp_path: Path) -> None:
    assert record.load(tmp_path / "none.json") == record.Record()


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"version": 2, "files": [], "sysctls": [], "dirs": []}',
        '{"version": 1, "files": [{"path": "a"}], "sysctls": [], "dirs": []}',
        '{"version": 1, "files": [{"path": "a", "content_base64": "!!", "mode": 1}],'
        ' "sysctls": [], "dirs": []}',
        "[]",
        # Forged paths and keys: outside the host root, or out of proc/sys.
        '{"version": 1, "files": [{"path": "/etc/passwd", "content_base64": null, "mode": null}],'
        ' "sysctls": [], "dirs": []}',
        '{"version": 1, "files": [{"path": "etc/../../x", "content_base64": null, "mode": null}],'
        ' "sysctls": [], "dirs": []}',
        '{"version": 1, "files": [], "sysctls": [], "dirs": ["../emptydir"]}',
        '{"version": 1, "files": [], "sysctls": [{"key": "//.//.etc.cron/d.x", "before": "1",'
        ' "written": "1"}], "dirs": []}',
        '{"version": 1, "files": [{"path": "a", "content_base64": null, "mode": "abc"}],'
        ' "sysctls": [], "dirs": []}',
        '{"version": 1, "files": [], "sysctls": [{"key": "vm.x", "before": 1, "written": "1"}],'
        ' "dirs": []}',
        '{"version": 1, "files": [{"path": 5, "content_base64": null, "mode": null}],'
        ' "sysctls": [], "dirs": []}',
    ],
)
def test_a_damaged_record_is_a_source_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(text)
    with pytest.raises(errors.SourceError, match="not a tuning record"):
        record.load(path)


def test_a_record_of_other_bytes_than_utf8_is_a_source_error(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(b'{"version": 1, \xff}')
    with pytest.raises(errors.SourceError, match="not a tuning record"):
        record.load(path)


def test_the_lock_is_held_by_one_at_a_time(tmp_path: Path) -> None:
    order: list[str] = []
    with record.locked(tmp_path):
        waiter = threading.Thread(target=lambda: _lock_and_note(tmp_path, order))
        waiter.start()
        time.sleep(0.2)
        order.append("first done")
    waiter.join(5)
    assert order == ["first done", "second"]


def _lock_and_note(root: Path, order: list[str]) -> None:
    with record.locked(root):
        order.append("second")


@given(st.text())
def test_any_text_is_a_record_or_a_source_error(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    path = tmp_path_factory.mktemp("record") / "record.json"
    path.write_text(text, errors="surrogatepass")
    try:
        loaded = record.load(path)
    except errors.SourceError as exc:
        assert str(exc).startswith(f"{path}: not a tuning record")
    else:
        assert isinstance(loaded, record.Record)
