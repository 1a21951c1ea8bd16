"""The node agent's side of containers: containerd and Docker clients, kubelet pod-resources,
tracking and device attribution, and the journal, outbox and shipper of their events."""

__all__: list[str] = []
