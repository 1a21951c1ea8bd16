from __future__ import annotations

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
    ],
)
def test_a_damaged_record_is_a_source_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(text)
    with pytest.raises(errors.SourceError, match="not a tuning record"):
        record.load(path)


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
