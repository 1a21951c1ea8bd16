"""Changes between two versions of a device's facts, named field by field."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.reports.storing.changes import changes, render, summary


def test_equal_facts_change_nothing() -> None:
    facts = {"serial": "A", "numa_node": 0, "ports": {1: {"state": "ACTIVE"}}}
    assert changes(facts, dict(facts)) == ()


def test_a_changed_field_is_named_with_both_values_as_json() -> None:
    old = {"serial": "A", "gpu_id": 0, "vbios": None}
    new = {"serial": "B", "gpu_id": 1, "vbios": "113-D65"}
    assert changes(old, new) == (
        'serial: "A" -> "B"',
        "gpu_id: 0 -> 1",
        'vbios: null -> "113-D65"',
    )


def test_a_port_going_down_is_named_by_its_number_and_field() -> None:
    up = {"state": "ACTIVE", "physical_state": "LinkUp", "rate_bytes_per_second": 5e10}
    down = {**up, "state": "DOWN", "physical_state": "Disabled"}
    assert changes({"ports": {1: up, 2: up}}, {"ports": {1: down, 2: up}}) == (
        'ports[1].state: "ACTIVE" -> "DOWN"',
        'ports[1].physical_state: "LinkUp" -> "Disabled"',
    )


def test_a_port_added_or_removed_is_named_whole() -> None:
    port = {"state": "ACTIVE"}
    assert changes({"ports": {1: port}}, {"ports": {2: port}}) == (
        'ports[2]: null -> {"state":"ACTIVE"}',
        'ports[1]: {"state":"ACTIVE"} -> null',
    )


def test_lists_and_fields_only_one_side_has() -> None:
    assert changes({"netdevs": ["eth0"], "gone": 1}, {"netdevs": ["eth0", "eth1"]}) == (
        'netdevs: ["eth0"] -> ["eth0","eth1"]',
        "gone: 1 -> null",
    )


def test_values_are_rendered_in_ascii() -> None:
    assert render("Radeon\u2122\x00") == '"Radeon\\u2122\\u0000"'
    assert render((1, None, 2.5)) == "[1,null,2.5]"


def test_a_summary_joins_the_changes_and_cuts_what_does_not_fit() -> None:
    names = ('serial: "A" -> "B"', "gpu_id: 0 -> 1")
    assert summary(names, 100) == 'serial: "A" -> "B"; gpu_id: 0 -> 1'
    assert summary(names, 10) == "serial:..."
    assert len(summary(names, 10)) == 10
    assert summary(names, 2) == "se"
    assert summary((), 10) == ""


facts = st.dictionaries(
    st.sampled_from(["serial", "gpu_id", "vbios", "ports"]),
    st.one_of(
        st.none(),
        st.integers(-3, 3),
        st.text(max_size=3),
        st.dictionaries(st.integers(1, 3), st.dictionaries(st.just("state"), st.text(max_size=2))),
    ),
)


@given(facts, facts)
def test_changes_are_empty_exactly_when_the_facts_are_equal(
    old: dict[str, object], new: dict[str, object]
) -> None:
    filled_old = {key: old.get(key) for key in {*old, *new}}
    filled_new = {key: new.get(key) for key in {*old, *new}}
    assert (changes(old, new) == ()) == (filled_old == filled_new)
    for named in changes(old, new):
        assert named.split(":", 1)[0].split("[", 1)[0].split(".", 1)[0] in {*old, *new}
