from __future__ import annotations

import pytest

from lens.runtime import names


@pytest.mark.parametrize("name", ["a", "lens", "prod-a-1", "0", "x" * 63])
def test_dns_labels(name: str) -> None:
    assert names.is_dns_label(name)


@pytest.mark.parametrize("name", ["", "A", "-a", "a-", "a.b", "a_b", "x" * 64, "a\n"])
def test_not_dns_labels(name: str) -> None:
    assert not names.is_dns_label(name)
