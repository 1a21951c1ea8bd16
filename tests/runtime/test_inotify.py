from __future__ import annotations

import select
from pathlib import Path

from lens.runtime import inotify


def _changed(watch: inotify.FolderWatch) -> bool:
    # poll, not select: a test worker may hold descriptors past select()'s 1,024.
    poller = select.poll()
    poller.register(watch.fileno(), select.POLLIN)
    return bool(poller.poll(2000)) and watch.drain() > 0


def test_a_file_written_in_a_watched_folder_is_seen(tmp_path: Path) -> None:
    watch = inotify.FolderWatch([tmp_path])
    try:
        assert watch.drain() == 0
        (tmp_path / "a.conf").write_text("x")
        assert _changed(watch)
        (tmp_path / "a.conf").unlink()
        assert _changed(watch)
    finally:
        watch.close()


def test_a_folder_made_later_is_watched_after_a_refresh(tmp_path: Path) -> None:
    folder = tmp_path / "etc" / "sysctl.d"
    watch = inotify.FolderWatch([folder])
    try:
        folder.parent.mkdir()  # seen through tmp_path, the nearest existing parent
        assert _changed(watch)
        watch.refresh()
        folder.mkdir()
        assert _changed(watch)
        watch.refresh()
        (folder / "99-lens.conf").write_text("vm.max_map_count = 1\n")
        assert _changed(watch)
    finally:
        watch.close()


def test_a_folder_deleted_and_made_again_is_watched_again(tmp_path: Path) -> None:
    folder = tmp_path / "sysctl.d"
    folder.mkdir()
    watch = inotify.FolderWatch([folder])
    try:
        folder.rmdir()
        assert _changed(watch)
        watch.refresh()  # as the watching part does after every change: now through the parent
        folder.mkdir()
        assert _changed(watch)
        watch.refresh()
        (folder / "99-lens.conf").write_text("a = 1\n")
        assert _changed(watch)
    finally:
        watch.close()
