from __future__ import annotations

import pytest

from lens.runtime import families
from lens.runtime.families import FamilyGroup, FamilySpec

from .conftest import GROUP


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
