"""Simulated node host trees: amdgpu sysfs, DRI nodes, RDMA sysfs, tool stand-ins, NVML."""

__all__: list[str] = []
