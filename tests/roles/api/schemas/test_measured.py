"""`measured` says when: as_of may be null (never measured), stale is always there."""

from __future__ import annotations

from lens.roles.api.schemas.measured import Measured


def test_as_of_is_nullable_and_both_are_required() -> None:
    schema = Measured.model_json_schema()
    assert set(schema["required"]) == {"as_of", "stale"}
    assert {"type": "null"} in schema["properties"]["as_of"]["anyOf"]
    assert Measured(as_of=None, stale=True).model_dump() == {"as_of": None, "stale": True}
