from __future__ import annotations

from lens.sim.hosts import models


def test_bdf_spelling_is_the_sysfs_one() -> None:
    assert models.bdf(0xC6) == "0000:c6:00.0"
    assert models.bdf(0x05, domain=1, function=1) == "0001:05:00.1"


def test_models_are_consistent() -> None:
    for model in models.MODELS.values():
        assert model.max_power_w > model.idle_power_w > 0
        assert model.device_id.startswith("0x")
        assert model.vram_bytes % (1024**3) == 0
    assert len(set(models.GPU_BUSES)) == len(models.GPU_BUSES)
    assert not set(models.GPU_BUSES) & set(models.NIC_BUSES)
