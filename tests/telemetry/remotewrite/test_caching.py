"""The label cache: bounded, emptied when the Relabeler's generation changes, used entries
outliving a turn, consistent under many threads."""

from __future__ import annotations

import threading

import pytest

from lens.telemetry.remotewrite.caching import LabelCache
from tests.telemetry.remotewrite.reference import GpuRelabeler


def _square(key: int) -> int:
    return key * key


def test_values_are_computed_once_and_found_in_the_young_dict() -> None:
    cache: LabelCache[int, int] = LabelCache(GpuRelabeler(), max_entries=10)
    computed: list[int] = []

    def compute(key: int) -> int:
        computed.append(key)
        return key * key

    assert cache.fill(3, compute) == 9 and cache.fill(3, compute) == 9
    assert computed == [3]
    assert cache.begin() == {3: 9}


def test_a_new_generation_empties_the_cache() -> None:
    relabeler = GpuRelabeler()
    cache: LabelCache[int, int] = LabelCache(relabeler, max_entries=10)
    cache.fill(1, _square)
    assert cache.begin() == {1: 1}
    relabeler.change((("pod", "other"),))
    assert cache.begin() == {} and len(cache) == 0


def test_the_cache_holds_at_most_max_entries_and_keeps_what_is_used() -> None:
    cache: LabelCache[int, int] = LabelCache(GpuRelabeler(), max_entries=4)
    for key in range(100):
        cache.fill(key, _square)
        cache.fill(0, lambda key: pytest.fail("0 was dropped while in use"))
        assert len(cache) <= 4
    assert len(cache) >= 2


def test_max_entries_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        LabelCache(GpuRelabeler(), max_entries=1)


def test_threads_filling_at_once_all_read_right_values() -> None:
    cache: LabelCache[int, int] = LabelCache(GpuRelabeler(), max_entries=64)
    wrong: list[tuple[int, int]] = []

    def work(offset: int) -> None:
        for index in range(3000):
            key = (index * 7 + offset) % 200
            value = cache.fill(key, _square)
            if value != key * key:
                wrong.append((key, value))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == [] and len(cache) <= 64 + 8
