"""A check of a whole 1.0 body in one protobuf parse that does not look inside labels, for the
fast path (v1.py): it parses WriteRequest with TimeSeries.labels as plain bytes, in a private
descriptor pool, so the C parser checks every field, sample, exemplar, histogram and metadata
entry but skips the Label messages and their UTF-8, a third of the cost. v1.py checks each
distinct label run once, when it first enters the cache, with the real classes."""

from __future__ import annotations

import functools

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from lens.proto._generated.prometheus import types_pb2

_PACKAGE = "lens.remotewrite.shallow"
_Field = descriptor_pb2.FieldDescriptorProto


@functools.cache
def _request_class() -> type[message.Message]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(descriptor_pb2.FileDescriptorProto.FromString(types_pb2.DESCRIPTOR.serialized_pb))
    schema = descriptor_pb2.FileDescriptorProto(
        name="lens/remotewrite/shallow.proto",
        package=_PACKAGE,
        syntax="proto3",
        dependency=[types_pb2.DESCRIPTOR.name],
    )
    series = schema.message_type.add(name="TimeSeries")
    series.field.add(name="labels", number=1, label=_Field.LABEL_REPEATED, type=_Field.TYPE_BYTES)
    for number, name, kind in ((2, "samples", "Sample"), (3, "exemplars", "Exemplar")):
        _add_messages(series, number, name, f".prometheus.{kind}")
    _add_messages(series, 4, "histograms", ".prometheus.Histogram")
    request = schema.message_type.add(name="WriteRequest")
    _add_messages(request, 1, "timeseries", f".{_PACKAGE}.TimeSeries")
    _add_messages(request, 3, "metadata", ".prometheus.MetricMetadata")
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.WriteRequest"))


def _add_messages(owner: descriptor_pb2.DescriptorProto, number: int, name: str, kind: str) -> None:
    owner.field.add(
        name=name,
        number=number,
        label=_Field.LABEL_REPEATED,
        type=_Field.TYPE_MESSAGE,
        type_name=kind,
    )


def check(raw: bytes) -> None:
    """Raises google.protobuf.message.DecodeError unless `raw` is a WriteRequest in all but
    the contents of its series' labels."""
    _request_class().FromString(raw)
