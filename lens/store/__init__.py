"""The SQL store: models, database opening, migrations, batched upserts and retention."""

__all__: list[str] = []
