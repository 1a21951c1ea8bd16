"""The cluster's inventory as periodic jobs compute it: nodes (node_info), GPU and RDMA devices
and their changelog, workload and pod status. Job bodies live here as functions of caches and
tables; `lens/roles/jobs/` lists them on the runner (docs/architecture.md).
"""

__all__: list[str] = []
