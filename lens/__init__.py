"""Lens: GPU-cluster observability for Kubernetes AI/ML clusters; here only its version."""

__version__ = "0.1.0"

__all__ = ["__version__"]
