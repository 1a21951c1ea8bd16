"""The enrichment's parameters: defaults that work, and impossible values refused by name."""

from __future__ import annotations

import pytest

from lens.runtime import errors
from lens.telemetry.enrichment.settings import EnrichmentSettings


def test_the_defaults_are_valid_and_label_teams_by_the_jobs_default_key() -> None:
    settings = EnrichmentSettings()
    assert (settings.team_label, settings.team_label_key) == ("team", "team")
    assert not settings.rename_like_original


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"max_pods": 0}, "max_pods"),
        ({"ended_grace_seconds": -1.0}, "ended_grace_seconds"),
        ({"overlap_seconds": 1e9}, "overlap_seconds"),
        ({"team_label": "team-name"}, "team_label"),
        ({"team_label": "__team"}, "team_label"),
        ({"team_label": "1team"}, "team_label"),
        ({"team_label_key": " team"}, "team_label_key"),
        ({"team_label_key": "k" * 129}, "team_label_key"),
    ],
)
def test_impossible_values_are_refused_naming_the_setting(
    changes: dict[str, object], key: str
) -> None:
    with pytest.raises(errors.ConfigError) as refused:
        EnrichmentSettings(**changes)  # type: ignore[arg-type]
    assert refused.value.key == key


def test_no_team_label_at_all_is_allowed() -> None:
    assert EnrichmentSettings(team_label="", team_label_key="").team_label == ""
