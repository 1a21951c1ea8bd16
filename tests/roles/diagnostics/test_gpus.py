"""`lens gpus` reads a simulated node the way the agent does and shows it as a table or JSON."""

from __future__ import annotations

import io
import json
import shutil
import time

import pytest
from rich.console import Console

from lens.devices.gpu import GpuSnapshot, GpuStatic
from lens.devices.sources import node_sources
from lens.roles.diagnostics import gpus
from lens.runtime.config import HostConfig
from lens.sim.hosts.tree import HostTree


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(renderable)
    return console.file.getvalue()


@pytest.mark.slow_timeout
def test_an_mi300x_node(mi300x: HostTree) -> None:
    report = gpus.diagnostic(HostConfig(root=str(mi300x.root))).read()
    assert len(report.gpus) == 8 and report.problems == ()
    assert report.driver_version == "6.10.5" and report.facts_source == "amd-smi"
    text = _text(gpus.table(report))
    assert "8 GPUs" in text and "AMD Instinct MI300X" in text and "renderD128" in text
    assert "static facts from amd-smi" in text
    document = json.loads(json.dumps(gpus.to_json(report)))
    first = document["gpus"][0]
    assert first["pci_bus_id"] == mi300x.node.gpus[0].bdf and first["vendor"] == "amd"
    assert first["dri"][0]["card"] == "/dev/dri/card1"


@pytest.mark.slow_timeout
def test_a_node_without_the_pci_bus_directory_still_shows_its_gpus(mi300x: HostTree) -> None:
    """Issue 17, point 4: `lens gpus` showed 0 GPUs where /sys/bus/pci/devices is missing."""
    shutil.rmtree(mi300x.root / "sys/bus/pci/devices")
    report = gpus.diagnostic(HostConfig(root=str(mi300x.root))).read()
    assert [g.pci_bus_id for g in report.gpus] == [g.bdf for g in mi300x.node.gpus]
    assert all(g.utilization_ratio is not None and g.power_watts for g in report.gpus)


def test_partitions_show_in_the_dri_column(cpx: HostTree) -> None:
    cpx.break_tool("amd-smi", "fail")
    cpx.break_tool("rocm-smi", "fail")
    report = gpus.GpuReader(
        node_sources(HostConfig(root=str(cpx.root)), wall_time=time.time)
    ).read()
    text = _text(gpus.table(report))
    assert "renderD128 +7" in text and "CPX" in text
    assert "static facts from sysfs" in text and "! amd-smi: amd-smi exited 255" in text


def test_an_nvidia_node_through_nvml(h100: HostTree) -> None:
    reader = gpus.GpuReader(
        node_sources(HostConfig(root=str(h100.root)), wall_time=time.time, nvml_binding=h100.nvml())
    )
    report = reader.read()
    assert [g.vendor for g in report.gpus] == ["nvidia", "nvidia"]
    assert report.driver_version == "550.54.15"
    assert "NVIDIA H100 80GB HBM3" in _text(gpus.table(report))


def test_broken_nvml_is_a_problem_not_a_crash(h100: HostTree) -> None:
    binding = h100.nvml()
    binding.fail("nvmlInit", 999)
    report = gpus.GpuReader(
        node_sources(HostConfig(root=str(h100.root)), wall_time=time.time, nvml_binding=binding)
    ).read()
    assert report.gpus == () and report.problems == ("nvidia: NVML: init: NVML error 999",)


def test_a_node_without_gpus(tmp_path) -> None:
    diagnostic = gpus.diagnostic(HostConfig(root=str(tmp_path)))
    report = diagnostic.read()
    assert diagnostic.empty(report) and "0 GPUs" in _text(gpus.table(report))


# --- issue 16, point 9: no tool output or sysfs value crashes `lens gpus` -----------------------


def test_names_that_look_like_markup_are_printed_as_they_are() -> None:
    # rich read "[/]" in a model name as a closing tag and raised MarkupError: no table at all.
    gpu = GpuSnapshot(
        vendor="amd",
        index=0,
        pci_bus_id="0000:0c:00.0",
        card="card1",
        model="[/]",
        serial="",
        uuid="",
        static=GpuStatic(pci_bus_id="0000:0c:00.0", compute_partition="[bold]"),
    )
    report = gpus.GpuReport(
        gpus=(gpu,),
        dri=None,
        driver_version="[/x]",
        facts_source="amd-smi",
        problems=("[/]",),
        read_at=0.0,
    )
    text = _text(gpus.table(report))
    assert "[/]" in text and "[bold]" in text and "driver [/x]" in text


@pytest.mark.slow_timeout
def test_amd_smi_output_that_is_no_utf_8_is_shown(mi300x: HostTree) -> None:
    # One non-UTF-8 byte raised UnicodeDecodeError out of `lens gpus`.
    output = json.dumps(
        [{"bus": {"bdf": g.bdf}, "asic": {"market_name": "MI300X @@"}} for g in mi300x.node.gpus]
    )
    mi300x.tool_prints("amd-smi", output.encode().replace(b"@@", b"\xff"))
    report = gpus.diagnostic(HostConfig(root=str(mi300x.root))).read()
    assert report.facts_source == "amd-smi" and report.problems == ()
    assert "MI300X \ufffd" in _text(gpus.table(report))


def test_static_facts_that_cannot_be_read_are_a_problem_not_a_crash(cpx: HostTree) -> None:
    # The ReadError of the static facts' refresh ended `lens gpus` before it showed anything.
    drm = cpx.root / "sys/class/drm"
    for entry in drm.iterdir():
        entry.unlink()
    drm.rmdir()
    drm.write_text("not a directory\n")
    report = gpus.GpuReader(
        node_sources(HostConfig(root=str(cpx.root)), wall_time=time.time)
    ).read()
    assert report.gpus == ()
    assert report.problems[0] == "static facts: /sys/class/drm: Not a directory"
    assert any(p.startswith("amdgpu: ") for p in report.problems)


@pytest.mark.slow_timeout
def test_each_gpus_health_is_shown(mi300x: HostTree) -> None:
    mi300x.node.add_memory_errors(1, uncorrectable=1)
    mi300x.node.add_bad_pages(2, pending=1)
    mi300x.update()
    report = gpus.diagnostic(HostConfig(root=str(mi300x.root))).read()
    states = [(g.health.state, g.health.reasons) for g in report.gpus if g.health is not None]
    assert states == [
        ("healthy", ()),
        ("unhealthy", ("ecc_uncorrectable",)),
        ("degraded", ("vram_pages_pending",)),
        *[("healthy", ())] * 5,
    ]
    text = _text(gpus.table(report))
    assert "unhealthy: ecc_uncorrectable" in text and "degraded: vram_pages_pending" in text
    document = json.loads(json.dumps(gpus.to_json(report)))
    assert document["gpus"][1]["health"] == {
        "state": "unhealthy",
        "reasons": ["ecc_uncorrectable"],
        "throttled": [],
    }
