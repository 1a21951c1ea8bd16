"""Every payload of `lens api` as a pydantic model (STYLE S9.3), so /openapi.json describes what
the routers answer: the envelope (base.py) and one module per area. Field names are the
original's (REFERENCE.md 2.1), snake_case or camelCase as it had them.
"""
