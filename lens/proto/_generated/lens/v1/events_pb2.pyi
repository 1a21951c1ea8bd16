import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from lens.proto._generated.lens.v1 import reports_pb2 as _reports_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Source(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_UNSPECIFIED: _ClassVar[Source]
    SOURCE_CONTAINERD: _ClassVar[Source]
    SOURCE_DOCKER: _ClassVar[Source]

class EventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_TYPE_UNSPECIFIED: _ClassVar[EventType]
    EVENT_TYPE_CREATED: _ClassVar[EventType]
    EVENT_TYPE_STARTED: _ClassVar[EventType]
    EVENT_TYPE_EXITED: _ClassVar[EventType]
    EVENT_TYPE_OOM_KILLED: _ClassVar[EventType]
    EVENT_TYPE_DELETED: _ClassVar[EventType]
    EVENT_TYPE_OBSERVED: _ClassVar[EventType]

class DeviceType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEVICE_TYPE_UNSPECIFIED: _ClassVar[DeviceType]
    DEVICE_TYPE_GPU: _ClassVar[DeviceType]
    DEVICE_TYPE_RDMA: _ClassVar[DeviceType]
SOURCE_UNSPECIFIED: Source
SOURCE_CONTAINERD: Source
SOURCE_DOCKER: Source
EVENT_TYPE_UNSPECIFIED: EventType
EVENT_TYPE_CREATED: EventType
EVENT_TYPE_STARTED: EventType
EVENT_TYPE_EXITED: EventType
EVENT_TYPE_OOM_KILLED: EventType
EVENT_TYPE_DELETED: EventType
EVENT_TYPE_OBSERVED: EventType
DEVICE_TYPE_UNSPECIFIED: DeviceType
DEVICE_TYPE_GPU: DeviceType
DEVICE_TYPE_RDMA: DeviceType

class EventBatch(_message.Message):
    __slots__ = ("node", "boot_id", "records")
    NODE_FIELD_NUMBER: _ClassVar[int]
    BOOT_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    node: str
    boot_id: str
    records: _containers.RepeatedCompositeFieldContainer[Record]
    def __init__(self, node: _Optional[str] = ..., boot_id: _Optional[str] = ..., records: _Optional[_Iterable[_Union[Record, _Mapping]]] = ...) -> None: ...

class Ack(_message.Message):
    __slots__ = ("boot_id", "committed_sequence")
    BOOT_ID_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    boot_id: str
    committed_sequence: int
    def __init__(self, boot_id: _Optional[str] = ..., committed_sequence: _Optional[int] = ...) -> None: ...

class Record(_message.Message):
    __slots__ = ("sequence", "observed_at", "event", "inventory", "gpu_minutes", "port_minutes", "devices")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_AT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    INVENTORY_FIELD_NUMBER: _ClassVar[int]
    GPU_MINUTES_FIELD_NUMBER: _ClassVar[int]
    PORT_MINUTES_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    observed_at: _timestamp_pb2.Timestamp
    event: ContainerEvent
    inventory: Inventory
    gpu_minutes: _reports_pb2.GpuMinutes
    port_minutes: _reports_pb2.PortMinutes
    devices: _reports_pb2.DeviceInventory
    def __init__(self, sequence: _Optional[int] = ..., observed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., event: _Optional[_Union[ContainerEvent, _Mapping]] = ..., inventory: _Optional[_Union[Inventory, _Mapping]] = ..., gpu_minutes: _Optional[_Union[_reports_pb2.GpuMinutes, _Mapping]] = ..., port_minutes: _Optional[_Union[_reports_pb2.PortMinutes, _Mapping]] = ..., devices: _Optional[_Union[_reports_pb2.DeviceInventory, _Mapping]] = ...) -> None: ...

class Pod(_message.Message):
    __slots__ = ("uid", "name", "namespace")
    UID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    uid: str
    name: str
    namespace: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class Device(_message.Message):
    __slots__ = ("type", "name", "number", "uuid", "path")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    type: DeviceType
    name: str
    number: int
    uuid: str
    path: str
    def __init__(self, type: _Optional[_Union[DeviceType, str]] = ..., name: _Optional[str] = ..., number: _Optional[int] = ..., uuid: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class DeviceList(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Device]
    def __init__(self, items: _Optional[_Iterable[_Union[Device, _Mapping]]] = ...) -> None: ...

class ContainerEvent(_message.Message):
    __slots__ = ("type", "source", "container_id", "container_name", "pod", "time", "created_at", "exit_code", "status", "devices")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_ID_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_NAME_FIELD_NUMBER: _ClassVar[int]
    POD_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    type: EventType
    source: Source
    container_id: str
    container_name: str
    pod: Pod
    time: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    exit_code: int
    status: str
    devices: DeviceList
    def __init__(self, type: _Optional[_Union[EventType, str]] = ..., source: _Optional[_Union[Source, str]] = ..., container_id: _Optional[str] = ..., container_name: _Optional[str] = ..., pod: _Optional[_Union[Pod, _Mapping]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., exit_code: _Optional[int] = ..., status: _Optional[str] = ..., devices: _Optional[_Union[DeviceList, _Mapping]] = ...) -> None: ...

class Inventory(_message.Message):
    __slots__ = ("source", "time", "container_ids")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_IDS_FIELD_NUMBER: _ClassVar[int]
    source: Source
    time: _timestamp_pb2.Timestamp
    container_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, source: _Optional[_Union[Source, str]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., container_ids: _Optional[_Iterable[str]] = ...) -> None: ...
