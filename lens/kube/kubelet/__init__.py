"""A node's kubelet: its HTTPS client, the GPUs its pods request, their ephemeral storage, and
the headless Service listing every kubelet as a Prometheus scrape target."""

__all__: list[str] = []
