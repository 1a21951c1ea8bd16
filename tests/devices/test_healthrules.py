"""The rules of GPU health as data: every reason a rule, the worst state wins, and the docs list
the rules as they are."""

from __future__ import annotations

from pathlib import Path

from lens.devices import healthrules


def test_the_worst_reason_sets_the_state_and_every_reason_is_a_rule() -> None:
    assert healthrules.worst([]) == "healthy"
    assert healthrules.worst(["degraded", "unhealthy", "healthy"]) == "unhealthy"
    assert set(healthrules.THROTTLE_REASONS.values()) <= {r.reason for r in healthrules.RULES}
    assert len({rule.reason for rule in healthrules.RULES}) == len(healthrules.RULES)


def test_docs_list_the_rules_as_they_are() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "node-agent.md").read_text()
    assert healthrules.rules_table() in docs, "copy healthrules.rules_table() into the docs"
