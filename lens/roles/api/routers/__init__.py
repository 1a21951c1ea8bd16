"""The routers of `lens api`, one module per resource: `nodes` (/v1/nodes...) and `clusters`
(/v1/clusters...); `params` holds the parameters they share."""

__all__: list[str] = []
