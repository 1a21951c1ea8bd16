"""The tuning policy from its file (a ConfigMap in the DaemonSet), re-read when the file
changes; the built-in policy when no file is given."""

from __future__ import annotations

import os
from pathlib import Path

from lens.runtime import errors
from lens.tune import rules


def read_policy(path: str) -> rules.Policy:
    """The policy in the YAML file at `path` ("" : the built-in one); ConfigError when it cannot
    be read or is wrong, naming the file and key."""
    if not path:
        return rules.DEFAULT_POLICY
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise errors.ConfigError(
            source=path, key="", expected=f"a readable policy file ({exc.strerror})"
        ) from None
    return rules.parse_policy(text, source=path)


def source_name(path: str) -> str:
    """How errors name where the policy came from."""
    return path or "built-in policy"


class PolicyFile:
    """The policy at `path`, read again when the file's identity or content changes (a
    ConfigMap update swaps a symlink, so the inode changes). A policy that turns bad keeps the
    last good one in force and is reported by `error`."""

    def __init__(self, path: str) -> None:
        """Reads the policy once: a bad one at start is a ConfigError."""
        self.path = path
        self._stamp = self._stat()
        self.policy = read_policy(path)
        self.error: str | None = None

    def current(self) -> rules.Policy:
        """The policy in force, after reading the file again if it changed."""
        stamp = self._stat()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self.policy = read_policy(self.path)
                self.error = None
            except errors.ConfigError as exc:
                self.error = str(exc)
        return self.policy

    def _stat(self) -> tuple[int, int, int, int] | None:
        if not self.path:
            return None
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_ino, found.st_dev, found.st_size, found.st_mtime_ns
