"""Node devices: GPUs (amdgpu sysfs, amd-smi, NVML), DRI nodes and RDMA ports under a host root."""

__all__: list[str] = []
