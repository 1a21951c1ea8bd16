"""Protocol definitions: Lens's own event protocol and the external gRPC APIs Lens speaks."""

__all__: list[str] = []
