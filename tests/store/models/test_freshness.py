from __future__ import annotations

from lens.store.models import freshness

from .conftest import check_tables


def test_a_figures_freshness_is_one_row_per_cluster_and_figure() -> None:
    check_tables([(freshness.FigureFreshness, "figure_freshness", ("cluster", "figure"), False)])
