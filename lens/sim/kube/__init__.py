"""A Kubernetes API server emulator that the official client uses unmodified."""

__all__: list[str] = []
