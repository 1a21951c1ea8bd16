"""Prometheus remote write 1.0 and 2.0: content negotiation and snappy bodies (protocol.py),
relabelling a request's series at wire speed (rewriting.py, v1.py) and converting between the
two versions (v2.py)."""
