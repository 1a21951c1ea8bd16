"""`lens api`: the REST API `/v1/...` and the dashboard. `main.py` builds the role (its
`create_app(config, store)` FastAPI factory, no module-level app), `schemas.py` holds every
pydantic model, `routers/` one module per resource (handlers call `lens/store/queries/`, no
SQL here), `static/` the dashboard with its vendored JavaScript libraries.
"""

__all__: list[str] = []
