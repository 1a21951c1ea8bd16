from __future__ import annotations

from lens.netflow.netflowmetrics import NetflowMetrics
from lens.roles.node_agent import collectors
from lens.runtime import families, metricsdoc
from lens.runtime.families import FamilyGroup, FamilySpec
from lens.runtime.selfmetrics import FamilyDoc, SelfMetrics
from lens.telemetry.trainlogs.intakemetrics import IntakeMetrics


def test_renders_a_sorted_table_per_section() -> None:
    docs = [
        FamilyDoc(name="lens_b_total", type="counter", labels=("x",), help="B | things."),
        FamilyDoc(name="lens_a", type="gauge", labels=(), help="A.", stability="stable"),
    ]
    text = metricsdoc.render_markdown([("Section", docs)])
    assert text.startswith("# Metrics\n")
    table = text[text.index("## Section") :].splitlines()
    assert table[2:6] == [
        "| name | type | labels | stability | help |",
        "|---|---|---|---|---|",
        "| `lens_a` | gauge | — | stable | A. |",
        "| `lens_b_total` | counter | `x` | alpha | B \\| things. |",
    ]


def test_self_metrics_and_family_specs_describe_themselves() -> None:
    metrics = SelfMetrics(process=False)
    metrics.counter("lens_events_total", "Events.", ("source",))
    assert metrics.declared == (
        FamilyDoc(name="lens_events_total", type="counter", labels=("source",), help="Events."),
    )
    group: FamilyGroup[int] = FamilyGroup(
        identity_labels=("gpu",),
        identity=lambda n: (str(n),),
        specs=(
            FamilySpec(
                name="lens_gpu_x_ratio", help="X.", type="gauge", samples=lambda n: [], opt_in=True
            ),
        ),
    )
    assert families.describe([group]) == [
        FamilyDoc(name="lens_gpu_x_ratio", type="gauge", labels=("gpu",), help="X. Opt-in.")
    ]


def test_renamed_families_are_listed_old_to_new_after_the_sections() -> None:
    renamed = [metricsdoc.Rename(old="lens_a_counter_total", new="lens_a_events_total", why="W.")]
    text = metricsdoc.render_markdown([("Section", [])], renamed)
    assert text.endswith(
        "## Renamed families\n\n"
        "| old name | new name | why |\n"
        "|---|---|---|\n"
        "| `lens_a_counter_total` | `lens_a_events_total` | W. |\n"
    )
    assert "Renamed" not in metricsdoc.render_markdown([("Section", [])], [])


def test_every_rename_leads_from_a_gone_family_to_an_exported_one() -> None:
    families = SelfMetrics(process=False)
    IntakeMetrics(families)
    NetflowMetrics(families, ttl_seconds=60)
    exported = set(collectors.family_names()) | {f.name for f in families.declared}
    for rename in metricsdoc.RENAMED:
        assert rename.new in exported and rename.old not in exported, rename
