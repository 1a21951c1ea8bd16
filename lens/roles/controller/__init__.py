"""`lens controller`: GPU pods and their workloads from the Kubernetes API into the store."""
