"""Simulators for tests, benchmarks and `lens demo`: Kubernetes API, kubelets, GPU/RDMA hosts."""

__all__: list[str] = []
