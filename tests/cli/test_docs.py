from __future__ import annotations

from .conftest import REPO, run_lens


def test_docs_metrics_matches_the_committed_file() -> None:
    result = run_lens("docs", "metrics")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO / "docs" / "metrics.md").read_text(), (
        "regenerate: lens docs metrics > docs/metrics.md"
    )
