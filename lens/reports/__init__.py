"""Node device reports: what the node agent summarises from its own collection cycle — each
GPU's and RDMA port's use per minute, attributed to the containers that held the device, and the
device inventory — for `lens jobs` to store. Inputs are this package's own dataclasses: the node
agent role converts device readings and container holdings into them (docs/reports.md).
"""

__all__: list[str] = []
