"""The server's side of node device reports: `lens jobs` writes what agents report — GPU- and
port-minutes, hourly rollups, device inventory and its changelog — to the store, and trims it.
"""

__all__: list[str] = []
