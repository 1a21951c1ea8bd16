"""Metric families as data (STYLE S6): a FamilySpec maps a snapshot to samples.

Collectors and jobs declare `FAMILIES` next to their snapshot type; runtime/textformat.py writes
them as text (its SnapshotFamilies holds the latest snapshots of one type as a text source of
runtime/exposition.py's publisher).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Literal, TypeVar

from lens.runtime import selfmetrics

S = TypeVar("S")

FamilyType = Literal["gauge", "counter", "info"]
Stability = Literal["alpha", "stable"]
Sample = tuple[tuple[str, ...], float | None]
"""Label values (after the identity labels) and a value; None means unknown and is left out."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FamilySpec(Generic[S]):
    """One metric family computed from snapshots of type S."""

    name: str
    help: str
    type: FamilyType
    samples: Callable[[S], Iterable[Sample]]
    labels: tuple[str, ...] = ()
    stability: Stability = "alpha"
    opt_in: bool = False


def spec(
    name: str,
    help: str,
    type: FamilyType = "gauge",
    labels: tuple[str, ...] = (),
    *,
    samples: Callable[[S], Iterable[Sample]],
    stability: Stability = "alpha",
) -> FamilySpec[S]:
    """A FamilySpec written compactly, as family tables do."""
    return FamilySpec(
        name=name, help=help, type=type, labels=labels, samples=samples, stability=stability
    )


def one(value: float | None) -> list[Sample]:
    """The single, label-less sample of a value (none when it is unknown)."""
    return [((), None if value is None else float(value))]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FamilyGroup(Generic[S]):
    """The families of one snapshot type; identity labels are prepended to every sample."""

    identity_labels: tuple[str, ...]
    identity: Callable[[S], tuple[str, ...]]
    specs: tuple[FamilySpec[S], ...]


def labelled(
    group: FamilyGroup[S], labels: tuple[str, ...], *, values: Callable[[S], tuple[str, ...]]
) -> FamilyGroup[S]:
    """`group` with `labels` after its identity labels, their values from `values`. It shares
    `group`'s specs: a render given both renders their families once (textformat.py), so a
    process renders either, never both."""
    identity = group.identity
    return FamilyGroup(
        identity_labels=group.identity_labels + labels,
        identity=lambda snapshot: identity(snapshot) + values(snapshot),
        specs=group.specs,
    )


def check_groups(groups: Sequence[FamilyGroup[Any]], *, taken: Iterable[str] = ()) -> None:
    """Fail at startup on a bad name or a name used twice (as client_python's registry does)."""
    seen = set(taken)
    for group in groups:
        for spec in group.specs:
            selfmetrics.check_family(
                spec.name, spec.help, spec.type, group.identity_labels + spec.labels
            )
            if spec.name in seen:
                raise ValueError(f"{spec.name}: metric family declared twice")
            seen.add(spec.name)


def describe(groups: Sequence[FamilyGroup[Any]]) -> list[selfmetrics.FamilyDoc]:
    """The documentation rows of every family in `groups` (docs/metrics.md)."""
    return [
        selfmetrics.FamilyDoc(
            name=spec.name,
            type=spec.type,
            labels=group.identity_labels + spec.labels,
            help=spec.help + (" Opt-in." if spec.opt_in else ""),
            stability=spec.stability,
        )
        for group in groups
        for spec in group.specs
    ]
