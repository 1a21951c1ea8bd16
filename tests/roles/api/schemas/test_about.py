"""/v1/about's payload: every field required, so a client can rely on each."""

from __future__ import annotations

from lens.roles.api.schemas.about import About, Sources
from lens.roles.api.schemas.measured import Measured


def test_every_field_is_required() -> None:
    schema = About.model_json_schema()
    assert set(schema["required"]) == set(About.model_fields)
    never = Measured(as_of=None, stale=True)
    about = About(
        version="1",
        cluster="c1",
        team_label="",
        gpu_hours_labels=[],
        simulated=False,
        now=1_795_000_000.0,
        clock_rate=1.0,
        max_page_size=1000,
        sources=Sources(
            controller=never,
            node_info=never,
            agents=Measured(as_of=1_795_000_000, stale=False),
            idle=never,
            gpu_hours=never,
        ),
    )
    assert about.model_dump()["simulated"] is False
    assert set(Sources.model_json_schema()["required"]) == set(Sources.model_fields)
