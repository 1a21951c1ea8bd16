"""Versioned schema migrations applied in order by store/migrating.py; never edit a shipped one."""

__all__: list[str] = []
