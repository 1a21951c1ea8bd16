from __future__ import annotations

import pytest

from lens.sim.kube.selectors import parse_field_selector, parse_label_selector

LABELS = {"app": "train", "tier": "gpu", "rank": "3", "example.com/team": "ml"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=train", True),
        ("app==train", True),
        ("app!=train", False),
        ("app!=serve", True),
        ("missing!=x", True),
        ("app in (train,serve)", True),
        ("app notin (train)", False),
        ("missing notin (x)", True),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("rank>2", True),
        ("rank<3", False),
        ("app=train,tier in (gpu, cpu),example.com/team=ml", True),
        ("app=train,tier=cpu", False),
    ],
)
def test_label_selector_semantics(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


def test_an_object_without_labels() -> None:
    assert parse_label_selector("!app").matches(None)
    assert not parse_label_selector("app").matches(None)


@pytest.mark.parametrize("selector", ["app in ()", "a=b=c", "Bad Key=x", "app=b@d", "rank>x", ","])
def test_malformed_label_selectors_are_refused(selector: str) -> None:
    with pytest.raises(ValueError):
        parse_label_selector(selector)


POD = {
    "metadata": {"name": "p,1", "namespace": "ml"},
    "spec": {"nodeName": "node-1", "restartPolicy": "Never"},
    "status": {"phase": "Running", "podIP": "10.0.0.1"},
}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("metadata.name=p\\,1", True),
        ("metadata.namespace=ml,spec.nodeName=node-1", True),
        ("spec.nodeName!=node-1", False),
        ("spec.nodeName==node-2", False),
        ("status.phase=Running", True),
        ("status.podIP=10.0.0.1", True),
        ("spec.restartPolicy=Never", True),
    ],
)
def test_field_selector_semantics(selector: str, matches: bool) -> None:
    assert parse_field_selector(selector, "Pod").matches(POD) is matches


def test_fields_a_kind_does_not_have_are_refused() -> None:
    with pytest.raises(ValueError, match=r"field label not supported: spec\.nodeName"):
        parse_field_selector("spec.nodeName=x", "ConfigMap")
    with pytest.raises(ValueError, match="can't understand"):
        parse_field_selector("nonsense", "Pod")
    assert parse_field_selector("metadata.name=x", "ConfigMap").matches({"metadata": {"name": "x"}})
