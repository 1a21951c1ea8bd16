"""How the cluster's GPUs are used, from the node agents' per-minute reports and the
controller's tables: allocation, consumers, idle GPUs, GPU-hours per namespace and team,
storage. Job bodies live here; `lens/roles/jobs/` lists them on the runner.
"""

__all__: list[str] = []
