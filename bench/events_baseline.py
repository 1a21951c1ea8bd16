"""The original's event server, for bench_events: one event per message, one row at a time.

Per event, as REFERENCE.md 6 describes the original's jobs server: the node_containers row
is selected by key and inserted or saved, each device row is selected and inserted when absent,
and the event row is selected and inserted; every statement commits on its own. It writes the
same rows as Lens (recording.py's row builders) and acknowledges each message after writing it.

Run as `python -m bench.events_baseline --url URL --port PORT`; it serves until killed.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import peewee

from lens.containers import wire
from lens.containers.server import recording
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import events_pb2_grpc
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models, upserting

CLUSTER = "default"


def _select(model: type[models.LensModel], row: upserting.Row) -> Any:
    key = models.natural_key(model)
    return model.get_or_none(*[field == row[field.name] for field in key])


def _insert_or_save(model: type[models.LensModel], row: upserting.Row) -> None:
    existing = _select(model, row)
    if existing is None:
        model.create(**row)
        return
    for column, value in row.items():
        if column != "created_at":
            setattr(existing, column, value)
    existing.save()


def _insert_if_absent(model: type[models.LensModel], row: upserting.Row) -> None:
    if _select(model, row) is None:
        model.create(**row)


class OneByOne(events_pb2_grpc.ContainerEventsServicer):
    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._decoder = wire.Decoder()

    def Stream(  # the gRPC method's name
        self, request_iterator: Iterator[pb.EventBatch], context: grpc.ServicerContext
    ) -> Iterator[pb.Ack]:
        committed = 0
        for batch in request_iterator:
            with self._lock, database.session(self._db):
                for record in batch.records:
                    if record.WhichOneof("body") == "event":
                        self._write(batch.node, self._decoder.event(record.event))
                    committed = max(committed, record.sequence)
            yield pb.Ack(boot_id=batch.boot_id, committed_sequence=committed)

    def _write(self, node: str, event: Any) -> None:
        container = recording.container_row(CLUSTER, node, event)
        _insert_or_save(models.NodeContainer, _row(recording.CONTAINER_COLUMNS, container))
        for device in recording.device_rows(CLUSTER, event):
            _insert_if_absent(models.NodeContainerDevice, _row(recording.DEVICE_COLUMNS, device))
        event_row = recording.event_row(CLUSTER, event)
        _insert_if_absent(models.NodeContainerEvent, _row(recording.EVENT_COLUMNS, event_row))


def _row(columns: tuple[str, ...], values: tuple[object, ...]) -> upserting.Row:
    return dict(zip(columns, values, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.events_baseline")
    parser.add_argument("--url", required=True, help="database URL")
    parser.add_argument("--port", type=int, required=True, help="gRPC port on 127.0.0.1")
    args = parser.parse_args()
    db = database.open_database(DatabaseConfig(url=args.url))
    migrating.migrate(db)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    events_pb2_grpc.add_ContainerEventsServicer_to_server(OneByOne(db), server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    print("serving", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
