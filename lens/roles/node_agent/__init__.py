"""`lens node-agent`: GPUs, DRI, RDMA and kubelet collectors, /metrics and the node REST API."""

__all__: list[str] = []
