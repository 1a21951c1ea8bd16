"""`lens netflow`: TCP flows, RTT and connections of a node (lens/netflow), as metrics."""

__all__: list[str] = []
