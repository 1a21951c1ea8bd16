"""The envelope: the original's keys (REFERENCE.md 1.3), `data` typed per route in the schema."""

from __future__ import annotations

from lens.roles.api.schemas import base


def test_the_envelope_has_the_originals_keys() -> None:
    answer = base.Envelope[list[int]](meta=base.Meta(code=base.OK, message="OK"), data=[1])
    assert answer.model_dump() == {
        "meta": {"code": 2000, "message": "OK"},
        "data": [1],
        "tracing": None,
    }
    failed = base.ErrorEnvelope(meta=base.Meta(code=base.NOT_FOUND, message="node x not found"))
    assert failed.model_dump() == {
        "meta": {"code": 4004, "message": "node x not found"},
        "data": None,
        "tracing": None,
    }


def test_data_is_typed_in_the_schema() -> None:
    schema = base.Envelope[list[int]].model_json_schema()
    assert schema["properties"]["data"] == {
        "items": {"type": "integer"},
        "title": "Data",
        "type": "array",
    }
    assert set(schema["required"]) == {"meta", "data"}


def test_codes_are_the_originals() -> None:
    assert (base.OK, base.PARAMETER_INVALID, base.AUTH_FAILED, base.PERMISSION_DENY) == (
        2000,
        4001,
        4003,
        4005,
    )
    assert (base.NOT_FOUND, base.INTERNAL_ERROR, base.DATABASE_ERROR) == (4004, 5000, 5002)
