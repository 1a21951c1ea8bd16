"""The one check of Kubernetes' DNS label names (RFC 1123), shared by config and the controller.

A DNS label names a namespace and a cluster (every stored row carries it in `cluster`).
"""

from __future__ import annotations

import re

_DNS_LABEL_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")

DNS_LABEL_PATTERN = _DNS_LABEL_RE.pattern
"""The same rule as a regular expression, for schemas that declare it (OpenAPI)."""

DNS_LABEL = "a DNS label: 1-63 lowercase letters, digits or '-'"
"""What a DNS label is, for error messages."""


def is_dns_label(name: str) -> bool:
    """Whether `name` is a DNS label: 1-63 lowercase letters, digits or '-', alphanumeric ends."""
    return _DNS_LABEL_RE.fullmatch(name) is not None
