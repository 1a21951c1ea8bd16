from __future__ import annotations

import os
from pathlib import Path

from lens.sim.hosts import files


def test_write_replaces_atomically_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a/b/value"
    files.write(target, "1\n")
    files.write(target, b"2\n")
    assert target.read_text() == "2\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["value"]


def test_links_are_relative_and_can_be_repointed(tmp_path: Path) -> None:
    files.write(tmp_path / "x/one", "1")
    files.write(tmp_path / "x/two", "2")
    link = tmp_path / "y/link"
    files.link(link, tmp_path / "x/one")
    assert os.readlink(link) == "../x/one"
    files.link(link, tmp_path / "x/one")
    files.link(link, tmp_path / "x/two")
    assert link.read_text() == "2"
    files.device_node(tmp_path / "dev/kfd")
    assert (tmp_path / "dev/kfd").read_bytes() == b""
