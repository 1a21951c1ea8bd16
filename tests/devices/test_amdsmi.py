"""amd-smi and rocm-smi JSON in every shape they print, parsed into GpuStatic facts."""

from __future__ import annotations

import json

import pytest

from lens.devices.amdsmi import parse_amd_smi_static, parse_rocm_smi_cards, parse_rocm_smi_driver
from lens.runtime import errors

GPU = {
    "gpu": 0,
    "asic": {
        "market_name": "AMD Instinct MI300X",
        "device_id": "0x74a1",
        "asic_serial": "0x8F2A40B1C52E7D33",
        "oam_id": 3,
        "target_graphics_version": "gfx942",
    },
    "bus": {"bdf": "0000:1B:00.0", "max_pcie_speed": {"value": 32, "unit": "GT/s"}},
    "vbios": {"version": "022.040.003.043.000001"},
    "driver": {"name": "amdgpu", "version": "6.10.5"},
    "board": {"product_serial": "692139000119", "product_name": "N/A"},
    "partition": {"compute_partition": "SPX", "memory_partition": "NPS1", "partition_id": 0},
    "numa": {"node": 0, "affinity": "N/A"},
    "vram": {"type": "HBM3", "size": {"value": 196592, "unit": "MB"}},
}


def test_the_gpu_data_form_with_units() -> None:
    (facts,) = parse_amd_smi_static(json.dumps({"gpu_data": [GPU]}, indent=4)).values()
    assert facts.pci_bus_id == "0000:1b:00.0", "addresses are lowercase, as sysfs spells them"
    assert facts.market_name == "AMD Instinct MI300X"
    assert facts.serial == "692139000119" and facts.vbios == "022.040.003.043.000001"
    assert (facts.driver_version, facts.device_id, facts.gfx_version) == (
        "6.10.5",
        "0x74a1",
        "gfx942",
    )
    assert (facts.compute_partition, facts.memory_partition) == ("SPX", "NPS1")
    assert (facts.numa_node, facts.numa_affinity, facts.oam_id) == (0, None, 3)
    assert facts.vram_bytes == 196592 * 1024**2 and facts.vram_type == "HBM3"
    assert facts.source == "amd-smi"


def test_the_bare_list_form_after_a_banner() -> None:
    text = "WARNING: AMD GPU device(s) is/are in a low-power state.\n\n" + json.dumps([GPU])
    assert list(parse_amd_smi_static(text)) == ["0000:1b:00.0"]


def test_cpu_and_nic_data_beside_gpu_data_are_ignored() -> None:
    text = json.dumps({"cpu_data": [{"cpu": 0}], "nic_data": [], "gpu_data": [GPU]})
    assert list(parse_amd_smi_static(text)) == ["0000:1b:00.0"]


def test_na_everywhere_gives_unknowns() -> None:
    bare = {"gpu": 0, "bus": {"bdf": "0000:0c:00.0"}, "asic": "N/A", "vram": {"size": "N/A"}}
    (facts,) = parse_amd_smi_static(json.dumps([bare])).values()
    assert facts.market_name is None and facts.vram_bytes is None and facts.serial is None


def test_partitions_count_under_their_gpu() -> None:
    partition = {**GPU, "gpu": 1, "asic": {"market_name": "N/A"}}
    (facts,) = parse_amd_smi_static(json.dumps([GPU, partition, partition, partition])).values()
    assert facts.market_name == "AMD Instinct MI300X", "the first entry speaks for the GPU"
    assert facts.partition_count == 4


def test_the_serial_falls_back_to_the_asic_serial() -> None:
    gpu = {**GPU, "board": {"product_serial": "N/A"}}
    (facts,) = parse_amd_smi_static(json.dumps([gpu])).values()
    assert facts.serial == "0x8F2A40B1C52E7D33"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ERROR:root:Driver not loaded (amdgpu not found in modules)\n", "printed no JSON"),
        ("Segmentation fault (core dumped) {[\n", "malformed JSON"),
        ('{"error": "Can not find a device: GPU \'7\'", "code": -3}', "Can not find a device"),
        ("[]", "listed no GPUs"),
        ('{"gpu_data": "N/A"}', "no list of GPUs"),
    ],
)
def test_unusable_output_is_a_source_error(text: str, message: str) -> None:
    with pytest.raises(errors.SourceError, match=message):
        parse_amd_smi_static(text)


def test_rocm_smi_driver_version() -> None:
    assert parse_rocm_smi_driver('{"system": {"Driver version": "6.8.5"}}\n') == "6.8.5"
    with pytest.raises(errors.SourceError, match="no driver version"):
        parse_rocm_smi_driver('{"card0": {}}')
    with pytest.raises(errors.SourceError, match="printed no JSON"):
        parse_rocm_smi_driver("ERROR:root:Driver not initialized (amdgpu not found in modules)")


def test_rocm_smi_cards_with_uppercase_bus_ids() -> None:
    text = json.dumps(
        {
            "card0": {
                "PCI Bus": "0000:C9:00.0",
                "Serial Number": "692139000119",
                "Card Series": "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2",
            },
            "card1": {"PCI Bus": "0000:CA:00.0", "Card series": "N/A"},
            "system": {"Driver version": "6.8.5"},
        }
    )
    facts = parse_rocm_smi_cards(text)
    assert list(facts) == ["0000:c9:00.0", "0000:ca:00.0"]
    assert facts["0000:c9:00.0"].market_name == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"
    assert facts["0000:c9:00.0"].serial == "692139000119"
    assert facts["0000:ca:00.0"].market_name is None and facts["0000:ca:00.0"].source == "rocm-smi"
