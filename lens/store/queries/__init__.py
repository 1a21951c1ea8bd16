"""Read queries of the store, one module per resource the API and jobs read (pods, workloads,
nodes, usage...): the one place that holds SELECTs, so routers and job bodies hold none.
"""

__all__: list[str] = []
