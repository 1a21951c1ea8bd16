"""`lens demo`: `lens up` against a simulated cluster, in one process."""
