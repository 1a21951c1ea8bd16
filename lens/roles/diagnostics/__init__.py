"""`lens gpus` and `lens rdma`: what a node's GPUs and RDMA ports say now, as tables or JSON."""

__all__: list[str] = []
