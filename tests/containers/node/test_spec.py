from __future__ import annotations

import json

import pytest

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
