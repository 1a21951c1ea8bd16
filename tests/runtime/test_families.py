from __future__ import annotations

import dataclasses

import pytest

from lens.runtime import families
from lens.runtime.families import FamilyGroup, FamilySpec
from lens.runtime.textformat import SnapshotFamilies


@dataclasses.dataclass(frozen=True)
class Gpu:
    index: int
    power_watts: float | None
    energy_joules: float
    states: dict[str, float]


GROUP: FamilyGroup[Gpu] = FamilyGroup(
    identity_labels=("gpu",),
    identity=lambda g: (str(g.index),),
    specs=(
        FamilySpec(
            name="lens_gpu_power_watts",
            help="Board power draw in watts.",
            type="gauge",
            samples=lambda g: [((), g.power_watts)],
        ),
        FamilySpec(
            name="lens_gpu_energy_joules_total",
            help="Energy used since the driver loaded, in joules.",
            type="counter",
            samples=lambda g: [((), g.energy_joules)],
        ),
        FamilySpec(
            name="lens_gpu_clock_hertz",
            help="Current clock by domain, in hertz.",
            type="gauge",
            labels=("domain",),
            samples=lambda g: [((k,), v) for k, v in g.states.items()],
            opt_in=True,
        ),
    ),
)


def _text(source: SnapshotFamilies[Gpu]) -> str:
    return source.render_text()


def test_identity_labels_are_prepended_and_unknown_values_left_out() -> None:
    source = SnapshotFamilies(GROUP)
    source.update([Gpu(0, 300.5, 10.0, {"sclk": 1e9}), Gpu(1, None, 20.0, {})])
    text = _text(source)
    assert 'lens_gpu_power_watts{gpu="0"} 300.5' in text
    assert 'lens_gpu_power_watts{gpu="1"}' not in text
    assert 'lens_gpu_energy_joules_total{gpu="1"} 20.0' in text
    assert "lens_gpu_clock_hertz" not in text


def test_opt_in_families_render_when_enabled() -> None:
    source = SnapshotFamilies(GROUP, opt_in=frozenset({"lens_gpu_clock_hertz"}))
    source.update([Gpu(0, 1.0, 1.0, {"sclk": 1e9, "mclk": 2e9})])
    text = _text(source)
    assert 'lens_gpu_clock_hertz{gpu="0",domain="mclk"} 2e+09' in text


def test_devices_that_disappear_are_gone_from_the_next_render() -> None:
    source = SnapshotFamilies(GROUP)
    source.update([Gpu(0, 1.0, 1.0, {}), Gpu(1, 1.0, 1.0, {})])
    assert 'gpu="1"' in _text(source)
    source.update([Gpu(0, 1.0, 1.0, {})])
    assert 'gpu="1"' not in _text(source)
    source.update([])
    assert "lens_gpu_power_watts" not in _text(source)


def test_check_groups_refuses_duplicates_and_bad_names() -> None:
    families.check_groups([GROUP])
    with pytest.raises(ValueError, match="declared twice"):
        families.check_groups([GROUP, GROUP])
    with pytest.raises(ValueError, match="declared twice"):
        families.check_groups([GROUP], taken={"lens_gpu_power_watts"})
    bad = FamilyGroup(
        identity_labels=(),
        identity=lambda g: (),
        specs=(FamilySpec(name="lens_x", help="X.", type="counter", samples=lambda g: []),),
    )
    with pytest.raises(ValueError, match="ends in _total"):
        families.check_groups([bad])


def test_spec_and_one_write_family_tables_compactly() -> None:
    from lens.runtime.families import one, spec

    written = spec("lens_demo_bytes", "Bytes.", labels=("kind",), samples=lambda n: one(n))
    assert written == FamilySpec(
        name="lens_demo_bytes",
        help="Bytes.",
        type="gauge",
        labels=("kind",),
        samples=written.samples,
    )
    assert list(written.samples(3)) == [((), 3.0)] and one(None) == [((), None)]
