from __future__ import annotations

from lens.runtime import families, metricsdoc
from lens.runtime.families import FamilyGroup, FamilySpec
from lens.runtime.selfmetrics import FamilyDoc, SelfMetrics


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
