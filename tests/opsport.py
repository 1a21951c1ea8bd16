"""GET on a role's HTTP port from a test: the status and text, 0 and "" while nothing answers
(the role not up yet), an error status with its body."""

from __future__ import annotations

import urllib.error
import urllib.request


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""
