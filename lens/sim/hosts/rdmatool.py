"""What the `rdma` (iproute2) stand-in prints for `dev`, `link` and `statistic`, text or -j.

Formats from shared/formats/rdma.md (iproute2 rdma/dev.c, link.c, stat.c): compact JSON arrays,
text lines such as `0: mlx5_0: node_type ca fw ... node_guid ...` and `link mlx5_0/1 state ...`,
and statistics as `link <dev>/<port>` with one indented counter per line.
"""

from __future__ import annotations

import json
from typing import Any

JsonObject = dict[str, Any]


def _compact(document: Any) -> str:
    return json.dumps(document, separators=(",", ":")) + "\n"


def _devices(nics: list[JsonObject], as_json: bool) -> str:
    if as_json:
        keys = ("node_guid", "sys_image_guid")
        return _compact(
            [
                {
                    "ifindex": n["index"],
                    "ifname": n["name"],
                    "node_type": "ca",
                    "fw": n["firmware"],
                    **{k: n[k] for k in keys},
                }
                for n in nics
            ]
        )
    return "".join(
        f"{n['index']}: {n['name']}: node_type ca fw {n['firmware']} "
        f"node_guid {n['node_guid']} sys_image_guid {n['sys_image_guid']}\n"
        for n in nics
    )


def _links(nics: list[JsonObject], as_json: bool) -> str:
    if as_json:
        return _compact(
            [
                {
                    "ifindex": n["index"],
                    "ifname": n["name"],
                    "port": 1,
                    "state": n["reading"]["state"],
                    "physical_state": "LINK_UP",
                    "netdev": n["netdev"],
                    "netdev_index": 10 + n["index"],
                }
                for n in nics
            ]
        )
    return "".join(
        f"link {n['name']}/1 state {n['reading']['state']} physical_state LINK_UP "
        f"netdev {n['netdev']}\n"
        for n in nics
    )


def _statistics(nics: list[JsonObject], as_json: bool) -> str:
    if as_json:
        return _compact(
            [{"ifname": n["name"], "port": 1, **n["reading"]["hw_counters"]} for n in nics]
        )
    blocks = []
    for nic in nics:
        counters = "".join(f"\n    {k} {v}" for k, v in nic["reading"]["hw_counters"].items())
        blocks.append(f"link {nic['name']}/1{counters}\n")
    return "".join(blocks)


def run(argv: list[str], state: JsonObject) -> tuple[str, int]:
    as_json = "-j" in argv or "--json" in argv
    words = [a for a in argv if not a.startswith("-")]
    objects = {"dev": _devices, "link": _links, "statistic": _statistics, "stat": _statistics}
    show = objects.get(words[0] if words else "")
    if show is None:
        return f'Object "{words[0] if words else ""}" is unknown, try "rdma help".\n', 1
    return show(state["nics"], as_json), 0
