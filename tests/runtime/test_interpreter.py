from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest

from lens.runtime import interpreter


@pytest.fixture
def restored_interpreter() -> Iterator[None]:
    thresholds, switch = gc.get_threshold(), sys.getswitchinterval()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    sys.setswitchinterval(switch)


@pytest.mark.usefixtures("restored_interpreter")
def test_start_up_objects_are_frozen_the_young_collected_less_often_and_the_gil_passed_sooner() -> (
    None
):
    middle, old = gc.get_threshold()[1:]
    made_at_start_up = [["configuration"]]  # alive when the role is built
    interpreter.tune_for_throughput()
    # Frozen objects are in no generation any collection walks.
    assert not any(o is made_at_start_up for o in gc.get_objects())
    made_later = [["a record"]]
    assert any(o is made_later for o in gc.get_objects())
    assert gc.get_threshold() == (interpreter.YOUNG_THRESHOLD, middle, old)
    assert sys.getswitchinterval() == pytest.approx(interpreter.SWITCH_INTERVAL)
    interpreter.tune_for_throughput(young_threshold=5000, switch_interval=0.001)
    assert (gc.get_threshold()[0], sys.getswitchinterval()) == (5000, pytest.approx(0.001))
