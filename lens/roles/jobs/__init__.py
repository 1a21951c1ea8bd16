"""`lens jobs`: the container event server (its periodic jobs come later)."""

__all__: list[str] = []
