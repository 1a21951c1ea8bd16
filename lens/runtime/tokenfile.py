"""A bearer token kept in a file (a projected service-account token, a mounted secret).

Re-read only when the file changed (inode, size or mtime), so a caller may ask on every request
or connection: the kubelet client, the agent's event shipper and the jobs event server do.
"""

from __future__ import annotations

import os
import threading

from lens.runtime import errors


class TokenFile:
    """A bearer token file, re-read only when it changed (inode, size or mtime)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._token = ""

    def read(self, *, force: bool = False) -> str:
        if not self._path:
            return ""
        try:
            status = os.stat(self._path)
        except OSError as exc:
            raise errors.SourceError(f"token file {self._path}: {exc.strerror}") from exc
        stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
        with self._lock:
            if force or stamp != self._seen:
                try:
                    with open(self._path, encoding="utf-8") as handle:
                        self._token = handle.read().strip()
                except OSError as exc:
                    raise errors.SourceError(f"token file {self._path}: {exc.strerror}") from exc
                except UnicodeDecodeError as exc:
                    raise errors.SourceError(f"token file {self._path}: not UTF-8 text") from exc
                self._seen = stamp
            return self._token


def configured(path: str, *, key: str) -> TokenFile:
    """The token file a config key names, read once now: unreadable is a ConfigError on `key`."""
    tokens = TokenFile(path)
    try:
        tokens.read()
    except errors.SourceError as exc:
        raise errors.ConfigError(
            source="config", key=key, expected=f"a readable file ({exc})"
        ) from exc
    return tokens
