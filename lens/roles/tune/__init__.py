"""`lens tune` as a daemon: the node kept to the tuning policy (lens/tune), with metrics."""

__all__: list[str] = []
