"""The node agent's REST API, in the original's envelope and field names (REFERENCE.md 2.2).

`{"meta": {"code": 2000, "message": "OK"}, "data": ..., "tracing": null}` around: /v1/gpus
(amd-smi-shaped static facts with `dri_device`, plus Lens's vendor, uuid and the facts' source
and age), /v1/gpuDriverVersion, /v1/cardMetrics (fresh readings only), /v1/driMapping and
/v1/rdma (inventory: the last good one, with its age); /v1/pods is a bare array of live
containers, as in the original. docs/node-agent.md documents the shapes.
"""

from __future__ import annotations

from collections.abc import Callable

from lens.containers.model import Container
from lens.containers.node import listing
from lens.devices.dri import DriNode
from lens.devices.gpu import GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort
from lens.devices.statics import StaticInventory
from lens.roles.node_agent.state import AgentState
from lens.runtime.httpserver import Handler, Request, Response, enveloped, json_response

CODE_NOT_FOUND = 4004

JsonObject = dict[str, object]


def _age(now: float, at: float | None) -> float | None:
    return None if at is None else round(max(0.0, now - at), 3)


def dri_device(node: DriNode, card_id: int) -> JsonObject:
    device: JsonObject = {
        "pciAddr": node.pci_bus_id,
        "card": node.card,
        "cardId": card_id,
        "render": node.render,
    }
    if node.partition:
        device["partition"] = node.partition
    return device


def gpu_info(gpu: GpuSnapshot, dri: DriNode | None, facts: JsonObject) -> JsonObject:
    """One GPU in amd-smi static's shape (the fields the original's consumers read)."""
    static = gpu.static or GpuStatic(pci_bus_id=gpu.pci_bus_id)
    vram_mib = None if static.vram_bytes is None else static.vram_bytes // 1024**2
    return {
        "gpu": gpu.index,
        "asic": {
            "market_name": static.market_name or gpu.model,
            "device_id": static.device_id,
            "asic_serial": f"0x{gpu.uuid.upper()}" if gpu.vendor == "amd" and gpu.uuid else None,
            "oam_id": static.oam_id,
            "target_graphics_version": static.gfx_version,
        },
        "bus": {"bdf": gpu.pci_bus_id},
        "vbios": {"version": static.vbios},
        "driver": {
            "name": "amdgpu" if gpu.vendor == "amd" else "nvidia",
            "version": static.driver_version,
        },
        "board": {"product_serial": gpu.serial or static.serial},
        "partition": {
            "compute_partition": static.compute_partition,
            "memory_partition": static.memory_partition,
        },
        "numa": {"node": gpu.numa_node, "affinity": static.numa_affinity},
        "vram": {
            "type": static.vram_type,
            "size": None if vram_mib is None else {"value": vram_mib, "unit": "MB"},
        },
        "dri_device": None if dri is None else dri_device(dri, gpu.index),
        "vendor": gpu.vendor,
        "uuid": gpu.uuid,
        "card": gpu.card,
        "static_facts": facts,
    }


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else round(ratio * 100, 2)


def card_metrics(gpu: GpuSnapshot, collected_at: float) -> JsonObject:
    """One GPU's readings under the original's card-metrics names, as numbers."""
    temperatures = dict(gpu.temperatures_celsius)
    allocated = None
    if gpu.memory_used_bytes is not None and gpu.memory_total_bytes:
        allocated = round(100 * gpu.memory_used_bytes / gpu.memory_total_bytes, 2)
    return {
        "gpu": gpu.index,
        "temperature_junction": temperatures.get("junction", temperatures.get("gpu")),
        "temperature_memory": temperatures.get("memory"),
        "socket_graphics_power_watts": gpu.power_watts,
        "gpu_use_percent": _percent(gpu.utilization_ratio),
        "gfx_activity": None,
        "gpu_memory_allocated_percent": allocated,
        "gpu_memory_rw_activity_percent": _percent(gpu.memory_activity_ratio),
        "memory_activity": None,
        "avg_memory_bandwidth": None,
        "pci_bus_id": gpu.pci_bus_id,
        "vendor": gpu.vendor,
        "collected_at": collected_at,
    }


def _port(port: RdmaPort) -> JsonObject:
    return {
        "port": port.port,
        "state": port.state,
        "physical_state": port.physical_state,
        "rate_bytes_per_second": port.rate_bytes_per_second,
        "link_layer": port.link_layer,
        "netdev": port.netdev,
    }


def rdma_device(device: RdmaDevice) -> JsonObject:
    """One device as `rdma dev show -j` prints it, plus what sysfs adds."""
    return {
        "ifindex": device.index,
        "ifname": device.name,
        "node_type": (device.node_type or "").lower() or None,
        "fw": device.fw_version,
        "node_guid": device.node_guid,
        "sys_image_guid": device.sys_image_guid,
        "pci_bus_id": device.pci_bus_id,
        "numa_node": device.numa_node,
        "uverbs": list(device.uverbs),
        "netdevs": list(device.netdevs),
        "ports": [_port(p) for p in device.ports],
    }


class NodeApi:
    """Route handlers over an AgentState and the static facts."""

    def __init__(
        self,
        state: AgentState,
        *,
        statics: Callable[[], StaticInventory],
        nvidia_driver: Callable[[], str | None],
        containers: Callable[[], list[Container]] | None = None,
    ) -> None:
        self._containers = containers
        self._state = state
        self._statics = statics
        self._nvidia_driver = nvidia_driver

    def routes(self) -> dict[str, Handler]:
        return {
            "/v1/gpus": self.gpus,
            "/v1/gpuDriverVersion": self.driver_version,
            "/v1/cardMetrics": self.card_metrics,
            "/v1/driMapping": self.dri_mapping,
            "/v1/rdma": self.rdma,
            "/v1/pods": self.pods,
        }

    def _dri_of(self, gpu: GpuSnapshot) -> tuple[DriNode, ...]:
        dri = self._state.dri.get()
        return () if dri is None else dri.value.of_gpu(gpu.pci_bus_id)

    def _facts(self, gpu: GpuSnapshot, seen_at: float, now: float) -> JsonObject:
        if gpu.vendor == "nvidia":
            return {"source": "nvml", "read_at": seen_at, "age_seconds": _age(now, seen_at)}
        inventory = self._statics()
        read_at = inventory.tool_read_at or inventory.refreshed_at
        return {
            "source": inventory.source,
            "read_at": read_at,
            "age_seconds": _age(now, read_at),
            "problems": list(inventory.problems),
        }

    def gpus(self, _: Request) -> Response:
        now = self._state.time()
        rows = []
        for gpu, observed in self._state.known_gpus():
            nodes = self._dri_of(gpu)
            info = gpu_info(gpu, nodes[0] if nodes else None, self._facts(gpu, observed.at, now))
            info["last_seen"] = observed.at
            rows.append(info)
        return enveloped(rows)

    def driver_version(self, _: Request) -> Response:
        version = self._statics().driver_version or self._nvidia_driver()
        if version is None:
            return enveloped(None, code=CODE_NOT_FOUND, message="no GPU driver found on this node")
        return enveloped(version)

    def card_metrics(self, _: Request) -> Response:
        rows = [
            card_metrics(gpu, observed.at)
            for gpu, observed in self._state.known_gpus()
            if observed.fresh
        ]
        return enveloped(rows)

    def dri_mapping(self, _: Request) -> Response:
        mapping: JsonObject = {}
        for gpu, _observed in self._state.known_gpus():
            for node in self._dri_of(gpu):
                if node.card is not None:
                    mapping[node.card] = dri_device(node, gpu.index)
        return enveloped(mapping)

    def rdma(self, _: Request) -> Response:
        observed = self._state.rdma.get()
        if observed is None:
            return enveloped([])
        age = _age(self._state.time(), observed.at)
        return enveloped(
            [
                {
                    **rdma_device(d),
                    "source": observed.value.source,
                    "observed_at": observed.at,
                    "age_seconds": age,
                }
                for d in observed.value.devices
            ]
        )

    def pods(self, _: Request) -> Response:
        """The live containers with their pods and devices: a bare array, as the original."""
        if self._containers is None:
            return enveloped(
                None,
                code=CODE_NOT_FOUND,
                message="container tracking is off (containers.containerd_address is empty)",
            )
        return json_response(listing.containers_json(self._containers()))
