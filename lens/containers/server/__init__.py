"""The jobs role's side of container events: receive agents' batches, deduplicate, commit them
to the store exactly once, acknowledge."""

__all__: list[str] = []
