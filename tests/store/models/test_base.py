from __future__ import annotations

import peewee
import pytest

from lens.store.models import base


class _Keyless(base.LensModel):
    name = base.text(16)

    class Meta:
        table_name = "keyless"


def test_every_row_has_an_id_and_a_cluster() -> None:
    fields = base.LensModel._meta.fields
    assert isinstance(fields["id"], peewee.BigAutoField)
    assert fields["cluster"].max_length == base.CLUSTER


def test_a_table_without_a_unique_index_has_no_natural_key() -> None:
    with pytest.raises(LookupError, match="_Keyless has no unique natural key"):
        base.natural_key(_Keyless)
    assert _Keyless._meta.fields["name"].default == ""
