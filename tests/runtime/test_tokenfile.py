from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lens.runtime import errors, tokenfile
from lens.runtime.tokenfile import TokenFile


def test_a_missing_token_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(errors.SourceError, match=r"token file .*No such file"):
        TokenFile(str(tmp_path / "token")).read()
    assert TokenFile("").read() == ""


def test_token_reads_are_thread_safe(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("abc\n")
    token = TokenFile(str(path))
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(token.read())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["abc"] * 8


def test_a_binary_token_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(errors.ConfigError, match=r"jobs\.token_file: .*not UTF-8 text"):
        tokenfile.configured(str(path), key="jobs.token_file")
