"""A simulated kubelet: /pods and /stats/summary over HTTPS, and the pod-resources gRPC API."""

__all__: list[str] = []
