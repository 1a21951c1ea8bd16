"""`python -m lens`: the same entry point as the `lens` console script (lens.cli)."""

import lens.cli

lens.cli.main()
