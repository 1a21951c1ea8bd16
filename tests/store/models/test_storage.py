from __future__ import annotations

import pytest

from lens.store.models import base, storage


@pytest.mark.parametrize(
    ("model", "table", "key", "append_only"),
    [
        (storage.Storage, "storage", ("cluster", "kind", "name"), False),
    ],
)
def test_tables_and_their_natural_keys(
    model: type[base.LensModel], table: str, key: tuple[str, ...], append_only: bool
) -> None:
    assert model._meta.table_name == table
    assert tuple(f.name for f in base.natural_key(model)) == key
    assert model.APPEND_ONLY is append_only
