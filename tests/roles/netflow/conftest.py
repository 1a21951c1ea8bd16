"""The netflow tests' link between two network namespaces (tests/netflow/conftest.py)."""

from tests.netflow.conftest import link

__all__ = ["link"]
