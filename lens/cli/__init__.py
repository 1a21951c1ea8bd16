"""The `lens` command (lens/cli/app.py) and its command groups, one module each."""

from lens.cli.app import app, main

__all__ = ["app", "main"]
