from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GpuMinutes(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[GpuMinute]
    def __init__(self, items: _Optional[_Iterable[_Union[GpuMinute, _Mapping]]] = ...) -> None: ...

class Reading(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...

class Share(_message.Message):
    __slots__ = ("namespace", "pod_name", "container", "pod_uid", "container_id", "held_seconds", "seconds")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    POD_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    POD_UID_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_ID_FIELD_NUMBER: _ClassVar[int]
    HELD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    pod_name: str
    container: str
    pod_uid: str
    container_id: str
    held_seconds: float
    seconds: float
    def __init__(self, namespace: _Optional[str] = ..., pod_name: _Optional[str] = ..., container: _Optional[str] = ..., pod_uid: _Optional[str] = ..., container_id: _Optional[str] = ..., held_seconds: _Optional[float] = ..., seconds: _Optional[float] = ...) -> None: ...

class GpuMinute(_message.Message):
    __slots__ = ("start", "uuid", "index", "pci_bus_id", "samples", "expected_samples", "utilization_mean_ratio", "utilization_max_ratio", "memory_activity_mean_ratio", "vram_used_mean_bytes", "vram_used_max_bytes", "power_mean_watts", "energy_joules", "temperatures_max_celsius", "held_by", "idle_seconds", "correction")
    START_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PCI_BUS_ID_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_MEAN_RATIO_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_MAX_RATIO_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ACTIVITY_MEAN_RATIO_FIELD_NUMBER: _ClassVar[int]
    VRAM_USED_MEAN_BYTES_FIELD_NUMBER: _ClassVar[int]
    VRAM_USED_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    POWER_MEAN_WATTS_FIELD_NUMBER: _ClassVar[int]
    ENERGY_JOULES_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURES_MAX_CELSIUS_FIELD_NUMBER: _ClassVar[int]
    HELD_BY_FIELD_NUMBER: _ClassVar[int]
    IDLE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    start: int
    uuid: str
    index: int
    pci_bus_id: str
    samples: int
    expected_samples: int
    utilization_mean_ratio: float
    utilization_max_ratio: float
    memory_activity_mean_ratio: float
    vram_used_mean_bytes: float
    vram_used_max_bytes: int
    power_mean_watts: float
    energy_joules: float
    temperatures_max_celsius: _containers.RepeatedCompositeFieldContainer[Reading]
    held_by: _containers.RepeatedCompositeFieldContainer[Share]
    idle_seconds: float
    correction: bool
    def __init__(self, start: _Optional[int] = ..., uuid: _Optional[str] = ..., index: _Optional[int] = ..., pci_bus_id: _Optional[str] = ..., samples: _Optional[int] = ..., expected_samples: _Optional[int] = ..., utilization_mean_ratio: _Optional[float] = ..., utilization_max_ratio: _Optional[float] = ..., memory_activity_mean_ratio: _Optional[float] = ..., vram_used_mean_bytes: _Optional[float] = ..., vram_used_max_bytes: _Optional[int] = ..., power_mean_watts: _Optional[float] = ..., energy_joules: _Optional[float] = ..., temperatures_max_celsius: _Optional[_Iterable[_Union[Reading, _Mapping]]] = ..., held_by: _Optional[_Iterable[_Union[Share, _Mapping]]] = ..., idle_seconds: _Optional[float] = ..., correction: _Optional[bool] = ...) -> None: ...

class PortMinutes(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[PortMinute]
    def __init__(self, items: _Optional[_Iterable[_Union[PortMinute, _Mapping]]] = ...) -> None: ...

class CounterIncrease(_message.Message):
    __slots__ = ("name", "increase")
    NAME_FIELD_NUMBER: _ClassVar[int]
    INCREASE_FIELD_NUMBER: _ClassVar[int]
    name: str
    increase: int
    def __init__(self, name: _Optional[str] = ..., increase: _Optional[int] = ...) -> None: ...

class PortMinute(_message.Message):
    __slots__ = ("start", "device", "port", "samples", "expected_samples", "transmit_bytes", "receive_bytes", "transmit_packets", "receive_packets", "counters", "hw_counters", "counter_resets")
    START_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    TRANSMIT_BYTES_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TRANSMIT_PACKETS_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_PACKETS_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    HW_COUNTERS_FIELD_NUMBER: _ClassVar[int]
    COUNTER_RESETS_FIELD_NUMBER: _ClassVar[int]
    start: int
    device: str
    port: int
    samples: int
    expected_samples: int
    transmit_bytes: int
    receive_bytes: int
    transmit_packets: int
    receive_packets: int
    counters: _containers.RepeatedCompositeFieldContainer[CounterIncrease]
    hw_counters: _containers.RepeatedCompositeFieldContainer[CounterIncrease]
    counter_resets: int
    def __init__(self, start: _Optional[int] = ..., device: _Optional[str] = ..., port: _Optional[int] = ..., samples: _Optional[int] = ..., expected_samples: _Optional[int] = ..., transmit_bytes: _Optional[int] = ..., receive_bytes: _Optional[int] = ..., transmit_packets: _Optional[int] = ..., receive_packets: _Optional[int] = ..., counters: _Optional[_Iterable[_Union[CounterIncrease, _Mapping]]] = ..., hw_counters: _Optional[_Iterable[_Union[CounterIncrease, _Mapping]]] = ..., counter_resets: _Optional[int] = ...) -> None: ...

class GpuFacts(_message.Message):
    __slots__ = ("uuid", "index", "vendor", "model", "serial", "pci_bus_id", "vbios", "vram_bytes", "numa_node", "compute_partition", "memory_partition", "driver_version", "health")
    UUID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SERIAL_FIELD_NUMBER: _ClassVar[int]
    PCI_BUS_ID_FIELD_NUMBER: _ClassVar[int]
    VBIOS_FIELD_NUMBER: _ClassVar[int]
    VRAM_BYTES_FIELD_NUMBER: _ClassVar[int]
    NUMA_NODE_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_PARTITION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_PARTITION_FIELD_NUMBER: _ClassVar[int]
    DRIVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    index: int
    vendor: str
    model: str
    serial: str
    pci_bus_id: str
    vbios: str
    vram_bytes: int
    numa_node: int
    compute_partition: str
    memory_partition: str
    driver_version: str
    health: str
    def __init__(self, uuid: _Optional[str] = ..., index: _Optional[int] = ..., vendor: _Optional[str] = ..., model: _Optional[str] = ..., serial: _Optional[str] = ..., pci_bus_id: _Optional[str] = ..., vbios: _Optional[str] = ..., vram_bytes: _Optional[int] = ..., numa_node: _Optional[int] = ..., compute_partition: _Optional[str] = ..., memory_partition: _Optional[str] = ..., driver_version: _Optional[str] = ..., health: _Optional[str] = ...) -> None: ...

class RdmaPortFacts(_message.Message):
    __slots__ = ("port", "state", "physical_state", "link_layer", "rate_bytes_per_second", "netdev")
    PORT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PHYSICAL_STATE_FIELD_NUMBER: _ClassVar[int]
    LINK_LAYER_FIELD_NUMBER: _ClassVar[int]
    RATE_BYTES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    NETDEV_FIELD_NUMBER: _ClassVar[int]
    port: int
    state: str
    physical_state: str
    link_layer: str
    rate_bytes_per_second: float
    netdev: str
    def __init__(self, port: _Optional[int] = ..., state: _Optional[str] = ..., physical_state: _Optional[str] = ..., link_layer: _Optional[str] = ..., rate_bytes_per_second: _Optional[float] = ..., netdev: _Optional[str] = ...) -> None: ...

class RdmaFacts(_message.Message):
    __slots__ = ("name", "node_guid", "sys_image_guid", "fw_version", "node_type", "hca_type", "board_id", "pci_bus_id", "numa_node", "netdevs", "ports")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_GUID_FIELD_NUMBER: _ClassVar[int]
    SYS_IMAGE_GUID_FIELD_NUMBER: _ClassVar[int]
    FW_VERSION_FIELD_NUMBER: _ClassVar[int]
    NODE_TYPE_FIELD_NUMBER: _ClassVar[int]
    HCA_TYPE_FIELD_NUMBER: _ClassVar[int]
    BOARD_ID_FIELD_NUMBER: _ClassVar[int]
    PCI_BUS_ID_FIELD_NUMBER: _ClassVar[int]
    NUMA_NODE_FIELD_NUMBER: _ClassVar[int]
    NETDEVS_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    node_guid: str
    sys_image_guid: str
    fw_version: str
    node_type: str
    hca_type: str
    board_id: str
    pci_bus_id: str
    numa_node: int
    netdevs: _containers.RepeatedScalarFieldContainer[str]
    ports: _containers.RepeatedCompositeFieldContainer[RdmaPortFacts]
    def __init__(self, name: _Optional[str] = ..., node_guid: _Optional[str] = ..., sys_image_guid: _Optional[str] = ..., fw_version: _Optional[str] = ..., node_type: _Optional[str] = ..., hca_type: _Optional[str] = ..., board_id: _Optional[str] = ..., pci_bus_id: _Optional[str] = ..., numa_node: _Optional[int] = ..., netdevs: _Optional[_Iterable[str]] = ..., ports: _Optional[_Iterable[_Union[RdmaPortFacts, _Mapping]]] = ...) -> None: ...

class GpuList(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[GpuFacts]
    def __init__(self, items: _Optional[_Iterable[_Union[GpuFacts, _Mapping]]] = ...) -> None: ...

class RdmaList(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[RdmaFacts]
    def __init__(self, items: _Optional[_Iterable[_Union[RdmaFacts, _Mapping]]] = ...) -> None: ...

class DeviceInventory(_message.Message):
    __slots__ = ("gpus", "rdma")
    GPUS_FIELD_NUMBER: _ClassVar[int]
    RDMA_FIELD_NUMBER: _ClassVar[int]
    gpus: GpuList
    rdma: RdmaList
    def __init__(self, gpus: _Optional[_Union[GpuList, _Mapping]] = ..., rdma: _Optional[_Union[RdmaList, _Mapping]] = ...) -> None: ...
