from __future__ import annotations

import pytest

from lens.runtime import config, errors, settings
from lens.runtime.config import ControllerConfig, KubeConfig

ENV = {"HOME": "/home/tester"}


def test_the_defaults_are_those_an_operator_expects() -> None:
    controller = ControllerConfig()
    assert controller.gpu_resources == ("amd.com/gpu", "nvidia.com/gpu")
    assert controller.finalizer_kinds == (), "finalizers are opt-in"
    assert controller.leader_election and controller.lease == "lens/lens-controller"
    assert KubeConfig().source == "auto"


def test_kube_values_are_checked_when_built() -> None:
    built = settings.build(KubeConfig, {"stall_seconds": 5, "page_size": 100}, source="test")
    assert (built.stall_seconds, built.page_size) == (5.0, 100)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("LENS_CONTROLLER__LEASE", "no-slash"),
        ("LENS_CONTROLLER__KUBELET_SERVICE", "a/b/c"),
        ("LENS_CONTROLLER__CLUSTERS_SECRET", "Upper/x"),
    ],
)
def test_object_references_are_namespace_slash_name(key: str, value: str) -> None:
    with pytest.raises(errors.ConfigError, match="expected NAMESPACE/NAME or empty"):
        config.load(environ={**ENV, key: value})
    assert config.load(environ={**ENV, key: ""}) is not None
