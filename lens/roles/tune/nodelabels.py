"""The labels of the daemon's node, which select the policy's profiles: `tune.node_labels`, with
the Node object's labels over them when `tune.node_name` is set (read again periodically; a
failed read keeps the last labels)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import kubernetes

from lens.runtime.config import TuneConfig
from lens.tune import rules

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_SECONDS = 10


class NodeLabels:
    """The current labels; `refresh()` reads the Node again."""

    def __init__(
        self, config: TuneConfig, api: Callable[[], kubernetes.client.ApiClient] | None
    ) -> None:
        """Refuses a malformed `tune.node_labels` (ConfigError); `api` makes the client."""
        self._static = rules.parse_labels(config.node_labels)
        self._node = config.node_name
        self._api = api
        self._client: kubernetes.client.ApiClient | None = None
        self._from_node: dict[str, str] = {}
        self._lock = threading.Lock()
        self._failing = False

    def current(self) -> dict[str, str]:
        with self._lock:
            return {**self._static, **self._from_node}

    def refresh(self) -> bool:
        """Read the Node's labels; whether they changed."""
        if not self._node or self._api is None:
            return False
        try:
            if self._client is None:
                self._client = self._api()
            node = kubernetes.client.CoreV1Api(self._client).read_node(
                self._node, _request_timeout=REQUEST_TIMEOUT_SECONDS
            )
        except Exception as exc:  # any failure (API, network, client config) keeps the last labels
            if not self._failing:
                log.warning(
                    "cannot read this node's labels; the last ones stay",
                    extra={"node": self._node, "error": f"{type(exc).__name__}: {exc}"},
                )
            self._failing = True
            return False
        self._failing = False
        metadata = node.metadata
        labels = dict((metadata.labels if metadata is not None else None) or {})
        with self._lock:
            changed = labels != self._from_node
            self._from_node = labels
        return changed
