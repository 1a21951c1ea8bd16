"""amd-smi and rocm-smi JSON in every shape they print, parsed into GpuStatic facts."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices.amdsmi import parse_amd_smi_static, parse_rocm_smi_cards, parse_rocm_smi_driver
from lens.devices.gpu import FAMILIES, GpuSnapshot, GpuStatic
from lens.runtime import errors
from lens.runtime.textformat import TextRenderer

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


# --- issue 16, point 9: odd fields leave that field unknown, never the whole output -----------


def _one(gpu: dict[str, object]) -> GpuStatic:
    (facts,) = parse_amd_smi_static(json.dumps({"gpu_data": [gpu]})).values()
    return facts


def test_a_blank_number_is_unknown() -> None:
    # It raised IndexError (" ".split()[0]), which stopped the node agent from starting.
    facts = _one({**GPU, "numa": {"node": " ", "affinity": {"value": "", "unit": "x"}}})
    assert facts.numa_node is None and facts.numa_affinity is None
    assert facts.market_name == "AMD Instinct MI300X", "the rest of the GPU is read"


def test_a_list_where_a_unit_belongs_leaves_the_size_unknown() -> None:
    # It raised TypeError (unhashable list as a dictionary key).
    facts = _one({**GPU, "vram": {"type": "HBM3", "size": {"value": 196592, "unit": ["MB"]}}})
    assert facts.vram_bytes is None and facts.vram_type == "HBM3"


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ({"value": 192, "unit": "GB"}, 192 * 1024**3),
        ({"value": 192, "unit": "GiB"}, 192 * 1024**3),
        ({"value": 196592, "unit": "MB"}, 196592 * 1024**2),
        (196592, 196592 * 1024**2),
        ({"value": 192, "unit": "GT/s"}, None),
        ({"value": -1, "unit": "MB"}, None),
        ({"value": 2**60, "unit": "GB"}, None),
        ({"value": "1e999", "unit": "MB"}, None),
        ({"value": 1.5, "unit": "MB"}, None),
    ],
)
def test_vram_sizes(size: object, expected: int | None) -> None:
    assert _one({**GPU, "vram": {"size": size}}).vram_bytes == expected


def test_fields_of_the_wrong_type_are_unknown() -> None:
    gpu = {
        **GPU,
        "asic": {"market_name": ["AMD"], "oam_id": True, "device_id": {"value": {"x": 1}}},
        "vbios": "022.040",
        "driver": {"version": 6.1},
        "partition": {"compute_partition": None, "memory_partition": 1e999},
    }
    facts = _one(gpu)
    assert (facts.market_name, facts.oam_id, facts.device_id, facts.vbios) == (None,) * 4
    assert facts.driver_version == "6.1", "a number where text belongs is read as written"
    assert facts.compute_partition is None and facts.memory_partition is None


def test_a_bus_address_that_is_no_text_skips_the_entry() -> None:
    with pytest.raises(errors.SourceError, match="listed no GPUs"):
        parse_amd_smi_static(json.dumps([{**GPU, "bus": {"bdf": ["0000:1b:00.0"]}}]))


def test_escaped_lone_surrogates_and_nuls_become_label_safe_text() -> None:
    text = json.dumps([GPU]).replace("AMD Instinct MI300X", "MI300X \\ud800 \\u0000 OAM")
    facts = parse_amd_smi_static(text)["0000:1b:00.0"]
    assert facts.market_name == "MI300X ?  OAM"
    _render(facts)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ('{"gpu_data": [' + "9" * 5000 + "]}", "a number too long to read"),
    ],
)
def test_output_no_parser_can_use_is_a_source_error(text: str, message: str) -> None:
    # Deep nesting raised RecursionError and 5000 digits ValueError: neither is a Lens error.
    with pytest.raises(errors.SourceError, match=message):
        parse_amd_smi_static(text)
    with pytest.raises(errors.SourceError):
        parse_rocm_smi_cards(text)


def test_an_error_report_of_odd_types_is_still_a_source_error() -> None:
    with pytest.raises(errors.SourceError, match=r"amd-smi reported: None \(code None\)"):
        parse_amd_smi_static('{"error": ["x"], "code": {"a": 1}}')


def test_rocm_smi_fields_of_the_wrong_type_are_unknown() -> None:
    text = json.dumps(
        {"card0": {"PCI Bus": "0000:C9:00.0", "Card Series": [1], "Serial Number": " "}}
    )
    facts = parse_rocm_smi_cards(text)["0000:c9:00.0"]
    assert facts.market_name is None and facts.serial is None
    with pytest.raises(errors.SourceError, match="no driver version"):
        parse_rocm_smi_driver('{"system": {"Driver version": ["6.8.5"]}}')


# --- property: any output is facts or a SourceError, and the facts always render ----------------

TEXTS = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.sampled_from(["N/A", "", " ", "\ud800", "0x74a1", "42 MB", "1e999", "[/]", "GB", "MB"]),
)
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXTS),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(TEXTS, inner, max_size=2),
    max_leaves=4,
)
# A field amd-smi prints, or {"value", "unit"} around any value.
FIELDS = st.one_of(VALUES, st.fixed_dictionaries({"value": VALUES, "unit": VALUES}))


@st.composite
def amd_smi_entries(draw: st.DrawFn) -> dict[str, object]:
    """The GPU entry above with any of its fields (or whole sections) replaced by anything."""
    entry: dict[str, object] = json.loads(json.dumps(GPU))
    for section, fields in GPU.items():
        if not isinstance(fields, dict):
            continue
        if draw(st.integers(0, 9)) == 0:
            entry[section] = draw(VALUES)
            continue
        replaced = draw(st.dictionaries(st.sampled_from([*fields, "unit"]), FIELDS, max_size=2))
        entry[section] = {**fields, **replaced}
    return entry


def _render(facts: GpuStatic) -> None:
    """Render the facts as the agent does (lens_gpu_info) and encode the text as it serves it."""
    gpu = GpuSnapshot(
        vendor="amd",
        index=0,
        pci_bus_id=facts.pci_bus_id,
        card="card1",
        model=facts.market_name or "",
        serial=facts.serial or "",
        uuid="",
        memory_total_bytes=facts.vram_bytes,
        numa_node=facts.numa_node,
        static=facts,
    )
    TextRenderer().render_groups([(FAMILIES, [gpu])], opt_in=frozenset()).encode()


def _well_formed(facts: dict[str, GpuStatic]) -> None:
    for bdf, static in facts.items():
        assert bdf == static.pci_bus_id and bdf == bdf.lower() and bdf
        for name in ("numa_node", "numa_affinity", "vram_bytes", "oam_id", "partition_count"):
            value = getattr(static, name)
            assert value is None or (type(value) is int and 0 <= value < 2**64), name
        _render(static)


@given(st.lists(amd_smi_entries(), max_size=2), st.booleans(), st.sampled_from(["", "WARN\n"]))
def test_any_amd_smi_output_is_facts_or_a_source_error(
    entries: list[dict[str, object]], wrapped: bool, banner: str
) -> None:
    text = banner + json.dumps({"gpu_data": entries} if wrapped else entries)
    try:
        facts = parse_amd_smi_static(text)
    except errors.SourceError:
        return
    _well_formed(facts)


@given(TEXTS)
def test_any_text_is_facts_or_a_source_error(text: str) -> None:
    for parse in (parse_amd_smi_static, parse_rocm_smi_cards):
        with contextlib.suppress(errors.SourceError):
            _well_formed(parse(text))
    with contextlib.suppress(errors.SourceError):
        assert parse_rocm_smi_driver(text).encode()


@given(st.dictionaries(st.sampled_from(["card0", "card1", "system", "x"]), VALUES, max_size=3))
def test_any_rocm_smi_document_is_facts_or_a_source_error(document: dict[str, object]) -> None:
    text = json.dumps(document)
    with contextlib.suppress(errors.SourceError):
        _well_formed(parse_rocm_smi_cards(text))
    with contextlib.suppress(errors.SourceError):
        assert parse_rocm_smi_driver(text).encode()
