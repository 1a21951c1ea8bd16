"""The cluster's storage backends: StorageClasses of JuiceFS, Weka, Ceph and NFS found by the
storage scan and written to `storage`, their capacity from a Prometheus-compatible query API, and
every cluster's storage config gathered into one Secret (docs/storage.md). Job bodies live here;
`lens/roles/jobs/` lists them on the runner and hands them the Kubernetes API.
"""

__all__: list[str] = []
