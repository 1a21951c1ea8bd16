"""Roles: one package per `lens <role>` command; main.py wires domains together."""

__all__: list[str] = []
