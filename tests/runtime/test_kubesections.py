from __future__ import annotations

from lens.runtime import settings
from lens.runtime.kubesections import ControllerConfig, KubeConfig


def test_the_defaults_are_those_an_operator_expects() -> None:
    controller = ControllerConfig()
    assert controller.gpu_resources == ("amd.com/gpu", "nvidia.com/gpu")
    assert controller.finalizer_kinds == (), "finalizers are opt-in"
    assert controller.leader_election and controller.lease == "lens/lens-controller"
    assert KubeConfig().source == "auto"


def test_kube_values_are_checked_when_built() -> None:
    built = settings.build(KubeConfig, {"stall_seconds": 5, "page_size": 100}, source="test")
    assert (built.stall_seconds, built.page_size) == (5.0, 100)
