"""Workload enrichment of remote-write series: which pod and top-level workload the GPU, RDMA
device or pod a series names works for (identity.py: by which labels), from an in-memory index
(index.py) kept current incrementally from the store (loading.py, reading.py); relabeling.py
adds the labels. The jobs role builds them from EnrichmentSettings (settings.py).
"""

__all__: list[str] = []
