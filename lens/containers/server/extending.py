"""Records of other domains on the agents' event stream, written in the same transaction.

The event server numbers, deduplicates and acknowledges every record of an agent's stream; a
record whose body is not a container event or inventory belongs to an extension the role
registers (the node device reports of lens/reports/storing/). The extension decodes its
records, makes their rows before the database is touched, and writes them inside the batch's
transaction, so that they are committed together with the stream's sequence: resent ones are
skipped like container events, and none is lost or written twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from lens.proto._generated.lens.v1 import events_pb2 as pb


class RecordExtension(Protocol):
    """What a role registers for a kind of record (the `body` names it decodes)."""

    @property
    def bodies(self) -> frozenset[str]: ...

    def decode(self, record: pb.Record) -> object:
        """The record's value; wirevalues.WireError when the store cannot hold it."""
        ...

    def prepare(self, node: str, values: Sequence[object]) -> object:
        """Rows of `values` (decoded by this extension, in sequence order), without the
        database."""
        ...

    def before_write(self, prepared: object) -> None:
        """Outside any transaction, before `write`: what the write needs made first."""
        ...

    def write(self, batches: Sequence[tuple[str, object]]) -> None:
        """Write the prepared rows of several agents' batches (node, prepared; a node at most
        once but for an agent restarted meanwhile) inside their open transaction (never
        commit): the event server writes the batches waiting at once together."""
        ...

    def committed(self, prepared: object) -> None:
        """After the transaction that wrote `prepared` committed (count it now, not before: a
        batch rolled back is written again)."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Carried:
    """A record of an extension, decoded."""

    extension: RecordExtension
    value: object


def by_body(extensions: Sequence[RecordExtension]) -> dict[str, RecordExtension]:
    """Each body name's extension; ValueError when two claim one, or one claims events'."""
    found: dict[str, RecordExtension] = {}
    for extension in extensions:
        for body in extension.bodies:
            if body in found or body in ("event", "inventory"):
                raise ValueError(f"record body {body!r} claimed twice")
            found[body] = extension
    return found
