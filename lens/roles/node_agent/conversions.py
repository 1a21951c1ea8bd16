"""The devices' and containers' values as the reports domain takes them (STYLE S2.2: the role
joins two domains): GPU and RDMA port readings as samples, containers as GPU holdings, and
the collections' identities and static facts as the device inventory (docs/reports.md).
"""

from __future__ import annotations

import re

from lens.containers.model import Container
from lens.devices.gpu import GpuSnapshot
from lens.devices.ib import RdmaDevice, RdmaPort
from lens.reports.inventory import GpuFacts, RdmaFacts, RdmaPortFacts
from lens.reports.samples import GpuSample, Holder, Holding, PortSample

# The driver's counters (hw_counters/) that count errors, discards, drops and retries; the rest
# count work done (e.g. rx_write_requests), which the minutes leave out.
_HW_ERROR = re.compile(r"err|discard|drop|out_of_|retry|retries|timeout")
# The PMA counters (counters/) that count no error: the traffic figures (data and packets) and
# port_xmit_wait, the ticks a port waited to send, which congestion alone makes grow by millions.
_PMA_NOT_ERRORS = re.compile(r"_data$|_packets$|_pkts$|_wait$")
_ENDED = frozenset({"Exit", "OOMKilled", "Deleted"})


def gpu_sample(gpu: GpuSnapshot, time: float) -> GpuSample:
    return GpuSample(
        uuid=gpu.uuid,
        index=gpu.index,
        pci_bus_id=gpu.pci_bus_id,
        time=time,
        utilization_ratio=gpu.utilization_ratio,
        memory_activity_ratio=gpu.memory_activity_ratio,
        vram_used_bytes=gpu.memory_used_bytes,
        power_watts=gpu.power_watts,
        energy_joules=gpu.energy_joules,
        temperatures_celsius=gpu.temperatures_celsius,
    )


class PortSampler:
    """RdmaPort readings as PortSamples: error and discard counters only, each counter's name
    judged once (a port shows the same few dozen names every cycle)."""

    def __init__(self) -> None:
        self._pma: dict[str, bool] = {}
        self._hw: dict[str, bool] = {}

    def sample(self, port: RdmaPort, time: float) -> PortSample:
        pma, hw = self._pma, self._hw
        for name, _ in port.counters:
            if name not in pma:
                pma[name] = not _PMA_NOT_ERRORS.search(name)
        for name, _ in port.hw_counters:
            if name not in hw:
                hw[name] = bool(_HW_ERROR.search(name))
        return PortSample(
            device=port.device,
            port=port.port,
            time=time,
            rate_bytes_per_second=port.rate_bytes_per_second,
            transmit_bytes=port.transmit_bytes,
            receive_bytes=port.receive_bytes,
            transmit_packets=port.transmit_packets,
            receive_packets=port.receive_packets,
            counters=tuple(item for item in port.counters if pma[item[0]]),
            hw_counters=tuple(item for item in port.hw_counters if hw[item[0]]),
        )


def holdings(container: Container, *, ended_at: float | None = None) -> list[Holding]:
    """The GPUs `container` holds, from its creation until it exited (None: still held).

    `ended_at`: when the agent saw it gone, for a container that ended without an exit time."""
    if not container.gpus:
        return []
    pod = container.pod
    holder = Holder(
        cluster="",
        namespace=pod.namespace if pod else "",
        pod_name=pod.name if pod else "",
        container=container.name,
        pod_uid=pod.uid if pod else "",
        container_id=container.id,
    )
    until = container.exited_at
    if until is None and (ended_at is not None or container.status in _ENDED):
        until = ended_at if ended_at is not None else container.created_at
    return [
        Holding(gpu_uuid=gpu.uuid, holder=holder, since=container.created_at, until=until)
        for gpu in container.gpus
    ]


def gpu_facts(gpu: GpuSnapshot) -> GpuFacts:
    static = gpu.static
    vram = static.vram_bytes if static is not None else None
    numa = gpu.numa_node if gpu.numa_node is not None else (static.numa_node if static else None)
    return GpuFacts(
        uuid=gpu.uuid,
        index=gpu.index,
        vendor=gpu.vendor,
        model=gpu.model,
        serial=gpu.serial,
        pci_bus_id=gpu.pci_bus_id,
        vbios=static.vbios if static else None,
        vram_bytes=vram if vram is not None else gpu.memory_total_bytes,
        numa_node=numa,
        compute_partition=static.compute_partition if static else None,
        memory_partition=static.memory_partition if static else None,
        driver_version=static.driver_version if static else None,
        health=gpu.health.summary() if gpu.health is not None else None,
    )


def rdma_facts(device: RdmaDevice) -> RdmaFacts:
    return RdmaFacts(
        name=device.name,
        node_guid=device.node_guid,
        sys_image_guid=device.sys_image_guid,
        fw_version=device.fw_version,
        node_type=device.node_type,
        hca_type=device.hca_type,
        board_id=device.board_id,
        pci_bus_id=device.pci_bus_id,
        numa_node=device.numa_node,
        netdevs=device.netdevs,
        ports=tuple(
            RdmaPortFacts(
                port=port.port,
                state=port.state,
                physical_state=port.physical_state,
                link_layer=port.link_layer,
                rate_bytes_per_second=port.rate_bytes_per_second,
                netdev=port.netdev,
            )
            for port in device.ports
        ),
    )
