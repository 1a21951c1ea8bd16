"""`lens netflow`: eBPF TCP flows, RTT and connections per node. BPF programs under `bpf/`, the
bcc loader (`loader.py`), in-kernel aggregation read back and classified by Kubernetes
(`flows.py`), and the non-eBPF fallback. Its role wiring goes in `lens/roles/netflow/`.
"""

__all__: list[str] = []
