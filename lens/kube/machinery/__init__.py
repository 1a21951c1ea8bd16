"""Kubernetes API machinery: clients from the `kube` config, raw requests and discovery, the
reflector (list, watch, relist) feeding an indexed cache, change batching, Lease election."""

__all__: list[str] = []
