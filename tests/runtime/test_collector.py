from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from lens.runtime import collector


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_collector")
def test_start_up_objects_are_frozen_and_the_young_collected_less_often() -> None:
    middle, old = gc.get_threshold()[1:]
    made_at_start_up = [["configuration"]]  # alive when the role is built
    collector.tune_for_throughput()
    # Frozen objects are in no generation any collection walks.
    assert not any(o is made_at_start_up for o in gc.get_objects())
    made_later = [["a record"]]
    assert any(o is made_later for o in gc.get_objects())
    assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, middle, old)
    collector.tune_for_throughput(young_threshold=5000)
    assert gc.get_threshold()[0] == 5000
