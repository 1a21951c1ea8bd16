"""ToolRunner runs host tools (here the simulated node's stand-ins) and names every failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lens.devices.tools import ToolRunner
from lens.runtime import errors
from lens.sim.hosts.tree import HostTree


def test_a_bare_tool_name_is_found_under_the_host_root(mi300x: HostTree) -> None:
    runner = ToolRunner(root=str(mi300x.root))
    assert runner.locate("amd-smi") == str(mi300x.tool("amd-smi"))
    assert runner.locate("rdma") == str(mi300x.tool("rdma"))
    assert '"gpu_data"' in runner.run(("amd-smi", "static", "--json"))


def test_with_a_prefix_or_the_real_root_names_are_left_to_the_host(mi300x: HostTree) -> None:
    assert ToolRunner(root="/").locate("amd-smi") == "amd-smi"
    prefixed = ToolRunner(
        root=str(mi300x.root), prefix=("nsenter", "--target", "1", "--mount", "--")
    )
    assert prefixed.locate("amd-smi") == "amd-smi"
    assert ToolRunner(root=str(mi300x.root)).locate("/opt/x/amd-smi") == "/opt/x/amd-smi"


@pytest.mark.slow_timeout
def test_a_prefix_runs_before_the_tool(mi300x: HostTree) -> None:
    runner = ToolRunner(prefix=(sys.executable,), root=str(mi300x.root))
    output = runner.run((str(mi300x.tool("rocm-smi")), "--showdriverversion", "--json"))
    assert "Driver version" in output


def test_a_missing_tool_is_no_data(tmp_path: Path) -> None:
    with pytest.raises(errors.NoDataError, match="amd-smi is not installed"):
        ToolRunner(root=str(tmp_path)).run(("amd-smi", "static", "--json"))


def test_a_failing_tool_reports_its_exit_status_and_last_line(mi300x: HostTree) -> None:
    mi300x.break_tool("amd-smi", "fail")
    with pytest.raises(errors.SourceError, match=r"amd-smi exited 255: ERROR:root:Driver not"):
        ToolRunner(root=str(mi300x.root)).run(("amd-smi", "static", "--json"))


@pytest.mark.slow_timeout
def test_a_hanging_tool_is_cut_off(mi300x: HostTree) -> None:
    mi300x.break_tool("rocm-smi", "hang")
    runner = ToolRunner(root=str(mi300x.root), timeout_seconds=1.0)
    with pytest.raises(errors.SourceError, match="rocm-smi did not answer within 1 s"):
        runner.run(("rocm-smi", "--showdriverversion", "--json"))


def test_a_tool_that_prints_nothing_is_an_error(tmp_path: Path) -> None:
    quiet = tmp_path / "usr/bin/quiet"
    quiet.parent.mkdir(parents=True)
    quiet.write_text("#!/bin/sh\nexit 0\n")
    quiet.chmod(0o755)
    with pytest.raises(errors.SourceError, match="quiet printed nothing"):
        ToolRunner(root=str(tmp_path)).run(("quiet",))


def test_a_file_that_cannot_be_executed_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "tool"
    broken.write_text("not a program")
    broken.chmod(0o755)
    with pytest.raises(errors.SourceError, match="could not run: Exec format error"):
        ToolRunner().run((str(broken),))


def test_output_that_is_no_utf_8_is_read_with_replacement_characters(mi300x: HostTree) -> None:
    # Issue 16, point 9: one non-UTF-8 byte raised UnicodeDecodeError out of the runner, which
    # stopped the node agent from starting and crashed `lens gpus`.
    mi300x.tool_prints("amd-smi", b'[{"asic": {"market_name": "MI300X \xff\xfe"}}]\n')
    output = ToolRunner(root=str(mi300x.root)).run(("amd-smi", "static", "--json"))
    assert output == '[{"asic": {"market_name": "MI300X \ufffd\ufffd"}}]\n'


def test_a_failing_tool_s_message_is_read_leniently_too(tmp_path: Path) -> None:
    tool = tmp_path / "usr/bin/broken"
    tool.parent.mkdir(parents=True)
    tool.write_bytes(b"#!/bin/sh\nprintf 'bad \\377 byte\\n' >&2\nexit 3\n")
    tool.chmod(0o755)
    with pytest.raises(errors.SourceError, match="broken exited 3: bad \ufffd byte"):
        ToolRunner(root=str(tmp_path)).run(("broken",))
