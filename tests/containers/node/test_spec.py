from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lens.containers.model import Pod
from lens.containers.node import spec
from lens.runtime import errors

SPEC = json.dumps(
    {
        "linux": {
            "devices": [
                {"path": "/dev/kfd", "type": "c", "major": 235, "minor": 0, "fileMode": 438},
                {"path": "/dev/dri/renderD128", "type": "c", "major": 226, "minor": 128},
                {"path": "/dev/fuse", "type": "u", "major": 10, "minor": 229},
                {"path": "/dev/sda", "type": "b", "major": 8, "minor": 0},
                {"path": "/dev/pipe", "type": "p"},
                {"path": "/dev/broken", "type": "c", "major": "x", "minor": 1},
            ]
        }
    }
).encode()


def test_devices_of_an_oci_spec_keep_char_and_block_nodes_with_numbers() -> None:
    assert [(d.path, d.type, d.major, d.minor) for d in spec.parse_spec_devices(SPEC)] == [
        ("/dev/kfd", "c", 235, 0),
        ("/dev/dri/renderD128", "c", 226, 128),
        ("/dev/fuse", "c", 10, 229),
        ("/dev/sda", "b", 8, 0),
    ]


def test_a_spec_without_devices_has_none_and_garbage_is_a_source_error() -> None:
    assert spec.parse_spec_devices(b"") == ()
    assert spec.parse_spec_devices(b'{"linux": {}}') == ()
    with pytest.raises(errors.SourceError, match="not JSON"):
        spec.parse_spec_devices(b"{nope")
    with pytest.raises(errors.SourceError, match="not a JSON object"):
        spec.parse_spec_devices(b"[1]")


def test_pod_identity_and_container_name_come_from_the_cri_labels() -> None:
    labels = {
        spec.POD_NAME: "train-0",
        spec.POD_NAMESPACE: "team-a",
        spec.POD_UID: "u-1",
        spec.CONTAINER_NAME: "main",
    }
    assert spec.pod_of(labels) == Pod(uid="u-1", name="train-0", namespace="team-a")
    assert spec.container_name("abc", labels) == "main"
    assert spec.pod_of({}) is None
    assert spec.container_name("abc", {}) == "abc"


def test_sandbox_containers_are_recognised() -> None:
    assert spec.is_sandbox({spec.KIND: "sandbox"})
    assert spec.is_sandbox({spec.CONTAINER_NAME: "POD"})
    assert not spec.is_sandbox({spec.KIND: "container"})


def test_a_deeply_nested_spec_is_a_source_error() -> None:
    """json.loads' RecursionError escaped to the tracker before the fix."""
    deep = b'{"linux": {"devices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    with pytest.raises(errors.SourceError, match="nested too deeply"):
        spec.parse_spec_devices(deep)
    with pytest.raises(errors.SourceError, match="not JSON"):
        spec.parse_spec_devices(b'{"linux": ' + b"9" * 5000 + b"}")  # past int's digit limit


def test_numbers_no_device_can_have_are_left_out() -> None:
    entries = [
        {"path": "/dev/a", "type": "c", "major": True, "minor": 1},
        {"path": "/dev/b", "type": "c", "major": -1, "minor": 1},
        {"path": "/dev/c", "type": "c", "major": 1 << 32, "minor": 1},
        {"path": "/dev/d", "type": ["c"], "major": 1, "minor": 1},
        {"path": "/dev/e", "type": "c", "major": 226, "minor": (1 << 32) - 1},
    ]
    document = json.dumps({"linux": {"devices": entries}}).encode()
    (kept,) = spec.parse_spec_devices(document)
    assert (kept.path, kept.major, kept.minor) == ("/dev/e", 226, (1 << 32) - 1)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=16),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)
DEVICE = st.fixed_dictionaries(
    {},
    optional={
        "path": st.text(max_size=16) | JSON,
        "type": st.sampled_from(["c", "b", "u", "p"]) | JSON,
        "major": st.integers() | JSON,
        "minor": st.integers() | JSON,
    },
)


def _check(document: bytes) -> None:
    try:
        devices = spec.parse_spec_devices(document)
    except errors.SourceError:
        return
    for device in devices:
        assert isinstance(device.path, str) and device.type in ("c", "b")
        assert 0 <= device.major < 1 << 32 and 0 <= device.minor < 1 << 32


@given(st.binary())
@example(b"[" * 5000)
def test_any_bytes_are_devices_or_a_source_error(document: bytes) -> None:
    _check(document)


@given(
    JSON
    | st.fixed_dictionaries({"linux": JSON})
    | st.fixed_dictionaries({"linux": st.fixed_dictionaries({"devices": JSON | st.lists(DEVICE)})})
)
def test_any_json_is_devices_or_a_source_error(value: object) -> None:
    _check(json.dumps(value).encode())


@given(st.integers(min_value=0, max_value=3000), st.sampled_from(["[", '{"a":']))
def test_any_nesting_is_devices_or_a_source_error(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    _check(('{"linux": {"devices": ' + opener * depth + "1" + closer * depth + "}}").encode())
