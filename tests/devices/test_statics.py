"""Static facts: amd-smi first, then rocm-smi and sysfs; the last good facts kept with their age."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import statics
from lens.devices.gpu import GpuStatic
from lens.devices.statics import StaticFactsSource
from lens.devices.sysfs import HostFiles
from lens.devices.tools import ToolRunner
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.sim.hosts.tree import AMD_DRIVER_VERSION, HostTree


def _source(tree: HostTree, clock: FakeClock) -> StaticFactsSource:
    return StaticFactsSource(
        HostFiles(tree.root),
        ToolRunner(root=str(tree.root), timeout_seconds=10),
        amd_smi="amd-smi",
        rocm_smi="rocm-smi",
        wall_time=clock.time,
    )


def test_sysfs_facts(mi300x: HostTree) -> None:
    facts = statics.read_sysfs_facts(HostFiles(mi300x.root))
    gpu = mi300x.node.gpus[0]
    assert list(facts) == [g.bdf for g in mi300x.node.gpus]
    first = facts[gpu.bdf]
    assert (first.market_name, first.serial) == ("AMD Instinct MI300X OAM", gpu.serial)
    assert first.vbios == "022.040.003.043.000001" and first.device_id == "0x74a1"
    assert (first.compute_partition, first.memory_partition) == ("SPX", "NPS1")
    assert first.numa_node == 0 and first.vram_bytes == 192 * 1024**3 and first.source == "sysfs"
    assert statics.read_driver_version(HostFiles(mi300x.root)) == AMD_DRIVER_VERSION


def test_merge_takes_unknowns_from_the_fallback() -> None:
    rich = GpuStatic(pci_bus_id="a", market_name="X", source="amd-smi")
    poor = GpuStatic(pci_bus_id="a", market_name="Y", serial="S", source="sysfs")
    merged = statics.merge(rich, poor)
    assert (merged.market_name, merged.serial, merged.source) == ("X", "S", "amd-smi")


@pytest.mark.slow_timeout
def test_amd_smi_facts_with_live_sysfs_partitions(mi300x: HostTree, clock: FakeClock) -> None:
    inventory = _source(mi300x, clock).refresh()
    assert inventory.source == "amd-smi" and inventory.problems == ()
    assert inventory.driver_version == AMD_DRIVER_VERSION
    assert inventory.tool_read_at == inventory.refreshed_at == clock.time()
    facts = inventory.facts[mi300x.node.gpus[3].bdf]
    assert facts.market_name == "AMD Instinct MI300X" and facts.source == "amd-smi"
    assert facts.oam_id == 3 and facts.vram_bytes == 192 * 1024**3


@pytest.mark.slow_timeout
def test_partitioned_gpus_keep_their_whole_memory(cpx: HostTree, clock: FakeClock) -> None:
    inventory = _source(cpx, clock).refresh()
    assert len(inventory.facts) == 2
    for facts in inventory.facts.values():
        assert facts.compute_partition == "CPX" and facts.partition_count == 8
        assert facts.vram_bytes == 192 * 1024**3, "amd-smi reports a partition's share"


@pytest.mark.slow_timeout
def test_rocm_smi_stands_in_when_amd_smi_fails(mi300x: HostTree, clock: FakeClock) -> None:
    mi300x.break_tool("amd-smi", "fail")
    inventory = _source(mi300x, clock).refresh()
    assert inventory.source == "rocm-smi"
    assert inventory.problems[0].startswith("amd-smi: amd-smi exited 255")
    facts = inventory.facts[mi300x.node.gpus[0].bdf]
    assert facts.market_name == "AMD Instinct MI300X", "rocm-smi's Card Series"
    assert facts.vbios == "022.040.003.043.000001", "sysfs fills what rocm-smi lacks"
    assert inventory.driver_version == AMD_DRIVER_VERSION


@pytest.mark.slow_timeout
def test_sysfs_alone_when_every_tool_fails(mi300x: HostTree, clock: FakeClock) -> None:
    mi300x.break_tool("amd-smi", "garbage")
    mi300x.break_tool("rocm-smi", "fail")
    inventory = _source(mi300x, clock).refresh()
    assert inventory.source == "sysfs" and len(inventory.problems) == 2
    assert "malformed JSON" in inventory.problems[0]
    assert inventory.tool_read_at is None
    assert inventory.facts[mi300x.node.gpus[0].bdf].market_name == "AMD Instinct MI300X OAM"
    assert inventory.driver_version == AMD_DRIVER_VERSION, "from /sys/module/amdgpu/version"


@pytest.mark.slow_timeout
def test_the_last_good_tool_facts_stay_with_their_age(mi300x: HostTree, clock: FakeClock) -> None:
    source = _source(mi300x, clock)
    first = source.refresh()
    clock.advance(600)
    mi300x.break_tool("amd-smi", "fail")
    later = source.refresh()
    assert later.source == "amd-smi" and later.facts == first.facts
    assert later.tool_read_at == first.tool_read_at == later.refreshed_at - 600
    assert len(later.problems) == 1, "rocm-smi is not asked: its facts are poorer"
    mi300x.break_tool("amd-smi", None)
    assert source.refresh().problems == ()
    assert source.facts() == dict(source.current().facts)


def test_a_node_without_amd_gpus_runs_no_tools(h100: HostTree, clock: FakeClock) -> None:
    inventory = _source(h100, clock).refresh()
    assert inventory.facts == {} and inventory.source == "none" and inventory.problems == ()
    assert inventory.driver_version is None


# --- issue 16, point 9: whatever the tools print, the facts are read -------------------------


@pytest.mark.slow_timeout
def test_amd_smi_output_with_a_stray_byte_and_odd_fields_still_gives_facts(
    mi300x: HostTree, clock: FakeClock
) -> None:
    gpus = [
        {
            "gpu": i,
            "bus": {"bdf": gpu.bdf.upper()},
            "asic": {"market_name": "AMD Instinct MI300X @@", "oam_id": " "},
            "vram": {"size": {"value": 196592, "unit": ["MB"]}},
            "numa": {"node": {"value": "", "unit": "N/A"}},
        }
        for i, gpu in enumerate(mi300x.node.gpus)
    ]
    # "@@" becomes one byte that is no UTF-8.
    mi300x.tool_prints("amd-smi", json.dumps(gpus).encode().replace(b"@@", b"\xff"))
    inventory = _source(mi300x, clock).refresh()
    assert inventory.source == "amd-smi" and inventory.problems == ()
    facts = inventory.facts[mi300x.node.gpus[0].bdf]
    assert facts.market_name == "AMD Instinct MI300X \ufffd"
    assert facts.oam_id is None, "a blank number is unknown"
    assert facts.vram_bytes == 192 * 1024**3, "VRAM in a list of units: sysfs' size"
    assert facts.numa_node == 0, "sysfs fills what the tool left unknown"


@pytest.mark.slow_timeout
@pytest.mark.parametrize(
    "output",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"gpu_data": [' + b"9" * 5000 + b"]}",
        b"\xff\xfe[\x00]",
    ],
)
def test_amd_smi_output_no_parser_can_use_falls_back(
    mi300x: HostTree, clock: FakeClock, output: bytes
) -> None:
    mi300x.tool_prints("amd-smi", output)
    inventory = _source(mi300x, clock).refresh()
    assert inventory.source == "rocm-smi", "the next tool is asked"
    assert inventory.problems[0].startswith("amd-smi: amd-smi printed")
    assert len(inventory.facts) == 8


class ToolOutputs:
    """A Runner that answers each tool with a fixed text, or raises a fixed error."""

    def __init__(self, outputs: dict[str, str | Exception]) -> None:
        self.outputs = outputs

    def run(self, command: Sequence[str]) -> str:
        answer = self.outputs.get(command[0], errors.NoDataError(f"{command[0]} not installed"))
        if isinstance(answer, Exception):
            raise answer
        return answer


OUTPUTS = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=10,
    ).map(json.dumps),
    st.builds(errors.SourceError, st.text(max_size=8)),
)


@given(amd_smi=OUTPUTS, rocm_smi=OUTPUTS)
def test_any_tool_output_gives_facts_for_every_gpu_in_sysfs(
    host: HostFiles, clock: FakeClock, amd_smi: str | Exception, rocm_smi: str | Exception
) -> None:
    runner = ToolOutputs({"amd-smi": amd_smi, "rocm-smi": rocm_smi})
    source = StaticFactsSource(
        host, runner, amd_smi="amd-smi", rocm_smi="rocm-smi", wall_time=clock.time
    )
    inventory = source.refresh()
    assert len(inventory.facts) == 8 and inventory.source in ("amd-smi", "rocm-smi", "sysfs")
    for problem in inventory.problems:
        assert problem.startswith(("amd-smi: ", "rocm-smi: "))
        problem.encode()
