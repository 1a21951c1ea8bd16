"""Debian's /usr/bin/prometheus for tests: on a port, with a config and its TSDB in a folder,
answering instant queries."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict


class Sample(TypedDict):
    """One element of an instant vector in /api/v1/query's answer."""

    metric: dict[str, str]
    value: tuple[float, str]  # evaluation time, the value as text


class PrivatePrometheus:
    """/usr/bin/prometheus on `port` with `config` (a prometheus.yml as a dict), further command
    line `flags`, and its TSDB and log under `directory` (made if need be)."""

    def __init__(
        self,
        directory: Path,
        *,
        port: int,
        config: Mapping[str, object],
        flags: tuple[str, ...] = (),
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.url = f"http://127.0.0.1:{port}"
        path = directory / "prometheus.yml"
        path.write_text(json.dumps(config, indent=1))  # JSON is YAML
        self._log = (directory / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                "/usr/bin/prometheus",
                f"--config.file={path}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
                *flags,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def ready(self) -> bool:
        assert self._process.poll() is None, "prometheus exited; see prometheus.log"
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, ConnectionError):
            return False

    def query(self, promql: str) -> list[Sample]:
        """The instant vector `promql` evaluates to now (/api/v1/query)."""
        address = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        with urllib.request.urlopen(address, timeout=5) as answer:
            document = json.load(answer)
        assert document["status"] == "success", document
        assert document["data"]["resultType"] == "vector"
        result: list[Sample] = document["data"]["result"]
        return result

    def values(self, promql: str, *, by: str) -> dict[str, float]:
        """{value of label `by`: sample value} of the vector `promql` evaluates to."""
        return {sample["metric"][by]: float(sample["value"][1]) for sample in self.query(promql)}

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._log.close()
