"""A family group of a small GPU snapshot, shared by the families and text format tests."""

from __future__ import annotations

import dataclasses

from lens.runtime.families import FamilyGroup, FamilySpec


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
