from __future__ import annotations

from lens.store.models import storage

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
        [
            (storage.Storage, "storage", ("cluster", "kind", "name"), False),
        ]
    )
