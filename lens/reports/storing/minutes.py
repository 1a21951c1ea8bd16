"""Write node agents' GPU- and port-minutes (gpuminutes.py, portminutes.py) to gpu_minutes,
gpu_minute_holders and rdma_port_minutes, sum each pod's minutes into gpu_minute_pods
(podminutes.py), and mark their hours for hours.py to roll up.

`lens jobs` calls it inside the event server's batch transaction, so the rows commit with the
stream's sequence. Writing a minute again (a resent record, or a later report of a minute after
the agent's clock stepped back) replaces its row and its holders, and sums its pods again: the
store keeps the later report. `prepare` makes the rows without the database, for the server to
prepare a batch while the last is written; `before_write` makes the day partitions they need
(PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import logging
import secrets
from collections.abc import Callable, Sequence

import peewee

from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute
from lens.reports.storing import partitions, podminutes, retention
from lens.reports.storing.minuterows import (
    GPU_COLUMNS,
    HOLDER_COLUMNS,
    PENDING_COLUMNS,
    PORT_COLUMNS,
    gpu_row,
    holder_rows,
    port_row,
)
from lens.runtime import errors
from lens.runtime.clock import Clock, SystemClock
from lens.store import database, models, upserting

log = logging.getLogger(__name__)

# Minutes per statement deleting the holder rows their GPU-minutes replace.
_DELETE_CHUNK = 400


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Dropped:
    """Minutes not stored because the window refused them (partitions.Window): the role counts
    them."""

    too_old: int = 0
    too_new: int = 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PreparedMinutes:
    """One node's minutes made into rows and statements, ready for `MinuteStore.write_prepared`."""

    node: str
    gpu: upserting.Planned | None
    # Deleting the holder rows of the GPU-minutes written (a minute written again has new ones).
    deletes: tuple[tuple[str, tuple[object, ...]], ...]
    holders: upserting.Planned | None
    ports: upserting.Planned | None
    pending: upserting.Planned | None  # the hours to roll up again (hours.py)
    # (node, the minutes of its GPU rows): whose gpu_minute_pods rows are summed again.
    summed: tuple[tuple[str, tuple[datetime.datetime, ...]], ...]
    days: frozenset[datetime.date]  # whose partitions the rows need
    rows: int  # gpu_minutes, gpu_minute_holders and rdma_port_minutes rows
    dropped: Dropped


class MinuteStore:
    """Writes one cluster's GPU- and port-minutes. Thread-safe: one per cluster and process.

    `keep` and `ahead` bound the minutes taken (partitions.Window); `keep` should be the
    retention's (retention.py), so that no minute lands in a day partition already dropped."""

    def __init__(
        self,
        db: peewee.Database,
        *,
        cluster: str,
        clock: Clock | None = None,
        keep: datetime.timedelta = retention.MINUTES_KEEP,
        ahead: datetime.timedelta = partitions.DAY,
    ) -> None:
        self._db = db
        self._cluster = cluster
        self._clock = clock or SystemClock()
        self._window = partitions.Window(keep=keep, ahead=ahead)
        self._days = partitions.DayCache(db)
        self._engine = database.engine_of(db)

    def write(self, node: str, gpu: Sequence[GpuMinute], ports: Sequence[PortMinute]) -> int:
        """Write one node's minutes in the caller's transaction (or one of its own); the rows
        written. Best with before_write's partitions made: see `write_prepared`."""
        return self.write_prepared(self.prepare(node, gpu, ports))

    def prepare(
        self, node: str, gpu: Sequence[GpuMinute], ports: Sequence[PortMinute]
    ) -> PreparedMinutes:
        """The rows of one node's minutes, planned without touching the database."""
        now = _at(self._clock.time())
        at = functools.lru_cache(maxsize=64)(_at)
        gpu_kept = [m for m in gpu if self._admits(at(m.start), now)]
        ports_kept = [m for m in ports if self._admits(at(m.start), now)]
        starts = [m.start for m in gpu] + [m.start for m in ports]
        dropped = self._count_dropped(node, [at(start) for start in starts], now)
        cluster = self._cluster
        gpus = [gpu_row(m, cluster=cluster, node=node, start=at(m.start)) for m in gpu_kept]
        held = [
            row
            for m in gpu_kept
            for row in holder_rows(m, cluster=cluster, node=node, start=at(m.start))
        ]
        links = [port_row(m, cluster=cluster, node=node, start=at(m.start)) for m in ports_kept]
        minutes = {at(m.start) for m in gpu_kept} | {at(m.start) for m in ports_kept}
        hours = sorted({_hour_of(at(m.start)) for m in gpu_kept})
        marks = [(cluster, node, hour, secrets.randbits(62), now) for hour in hours]
        planned = (
            upserting.plan_upsert(models.GpuMinuteReport, upserting.Table(GPU_COLUMNS, gpus)),
            upserting.plan_insert_new(
                models.GpuMinuteHolder, upserting.Table(HOLDER_COLUMNS, held)
            ),
            upserting.plan_upsert(models.RdmaPortMinute, upserting.Table(PORT_COLUMNS, links)),
        )
        return PreparedMinutes(
            node=node,
            gpu=planned[0],
            deletes=self._deletes(node, _replaced(gpu_kept, at)),
            holders=planned[1],
            ports=planned[2],
            pending=upserting.plan_upsert(
                models.GpuHourPending, upserting.Table(PENDING_COLUMNS, marks)
            ),
            summed=((node, tuple(sorted({at(m.start) for m in gpu_kept}))),) if gpu_kept else (),
            days=frozenset(partitions.day_of(minute) for minute in minutes),
            rows=sum(len(p.values) for p in planned if p is not None),  # each key once
            dropped=dropped,
        )

    def before_write(self, prepared: PreparedMinutes) -> None:
        """Outside any transaction, before `write_prepared`: make the day partitions the rows
        need (PostgreSQL; each day is checked once per process)."""
        self._days.ensure(prepared.days)

    def write_prepared(self, prepared: PreparedMinutes) -> int:
        """Write what `prepare` made, atomically, in the caller's transaction if there is one;
        the rows written. A day partition still missing is made here, within the transaction,
        which holds its lock on the table until the transaction ends: call before_write first."""
        self._days.ensure(prepared.days)
        try:
            if self._db.in_transaction():
                return self._write(prepared)  # the caller's: it rolls back if this fails
            return database.idempotent_transaction(self._db, lambda: self._write(prepared))
        except database.DRIVER_ERRORS as exc:
            raise errors.StoreError(
                f"writing the minutes of {prepared.node} failed: {errors.first_line(exc)}"
            ) from exc

    def write_many(self, prepared: Sequence[PreparedMinutes]) -> int:
        """Write several nodes' minutes (one batch each) as one: a statement per table for
        them all, where each would take its own; in the caller's transaction. The rows written."""
        if len(prepared) == 1:
            return self.write_prepared(prepared[0])
        return self.write_prepared(
            PreparedMinutes(
                node=f"{len(prepared)} nodes",
                gpu=upserting.merged([p.gpu for p in prepared]),
                deletes=tuple(delete for p in prepared for delete in p.deletes),
                holders=upserting.merged([p.holders for p in prepared]),
                ports=upserting.merged([p.ports for p in prepared]),
                pending=upserting.merged([p.pending for p in prepared]),
                summed=tuple(summed for p in prepared for summed in p.summed),
                days=frozenset().union(*(p.days for p in prepared)),
                rows=sum(p.rows for p in prepared),
                dropped=Dropped(),
            )
        )

    def forget_days_before(self, day: datetime.date) -> None:
        """Retention dropped the partitions before `day`: check them again if ever needed."""
        self._days.forget_before(day)

    def _write(self, prepared: PreparedMinutes) -> int:
        # Last: they sum what the statements before them stored.
        summing = podminutes.statements(cluster=self._cluster, written=prepared.summed)
        statements = _inline(prepared) if self._engine == "postgresql" else None
        if statements == []:
            return 0
        if statements is not None:
            # One round trip for all (psycopg2 fills the parameters in on this side).
            statements += summing
            sql = ";\n".join(statement for statement, _ in statements)
            database.execute(self._db, sql, [v for _, values in statements for v in values])
            return prepared.rows
        written = 0
        if prepared.gpu is not None:
            written += prepared.gpu.write()
        for sql, params in prepared.deletes:
            database.execute(self._db, sql, params)
        for planned in (prepared.holders, prepared.ports):
            if planned is not None:
                written += planned.write()
        if prepared.pending is not None:
            prepared.pending.write()
        for sql, values in summing:
            database.execute(self._db, sql, values)
        return written

    def _admits(self, minute: datetime.datetime, now: datetime.datetime) -> bool:
        return not (self._window.too_old(minute, now) or self._window.too_new(minute, now))

    def _count_dropped(
        self, node: str, minutes: Sequence[datetime.datetime], now: datetime.datetime
    ) -> Dropped:
        dropped = Dropped(
            too_old=sum(self._window.too_old(minute, now) for minute in minutes),
            too_new=sum(self._window.too_new(minute, now) for minute in minutes),
        )
        if dropped.too_old or dropped.too_new:  # counted by the role, per batch
            log.debug(
                "minutes outside the store's window dropped",
                extra={"node": node, "too_old": dropped.too_old, "too_new": dropped.too_new},
            )
        return dropped

    def _deletes(
        self, node: str, replaced: Sequence[tuple[datetime.datetime, tuple[str, ...]]]
    ) -> tuple[tuple[str, tuple[object, ...]], ...]:
        """The statements deleting the holder rows of the GPU-minutes `replaced`."""
        to_db = models.GpuMinuteHolder.minute.db_value
        deletes = []
        for start in range(0, len(replaced), _DELETE_CHUNK):
            sql, values = holders_delete(self._engine, replaced[start : start + _DELETE_CHUNK])
            params = (self._cluster, node, *(_converted(value, to_db) for value in values))
            deletes.append((sql, params))
        return tuple(deletes)


def _inline(prepared: PreparedMinutes) -> list[tuple[str, Sequence[object]]] | None:
    """Every statement of the write in order, each with its parameters; None when one of the
    inserts takes more than one statement (a node's backlog of minutes)."""
    parts = (prepared.gpu, *prepared.deletes, prepared.holders, prepared.ports, prepared.pending)
    statements: list[tuple[str, Sequence[object]]] = []
    for part in parts:
        if isinstance(part, upserting.Planned):
            inline = part.inline()
            if inline is None:
                return None
            statements.append(inline)
        elif part is not None:
            statements.append(part)
    return statements


def _converted(value: object, to_db: Callable[[object], object]) -> object:
    return to_db(value) if isinstance(value, datetime.datetime) else value


def holders_delete(
    engine: str, replaced: Sequence[tuple[datetime.datetime, tuple[str, ...]]]
) -> tuple[str, list[object]]:
    """The DELETE of the holder rows of `replaced` GPU-minutes (per minute, its GPUs) of one
    node, and its values after the cluster's and the node's. Its conditions are ones the unique
    key's index takes whole: a day partition just made has no statistics, and the planner would
    otherwise as soon scan all of the minute's rows."""
    quote = "`" if engine == "mysql" else '"'
    mark = "?" if engine == "sqlite" else "%s"

    def name(column: str) -> str:
        return f"{quote}{column}{quote}"

    def among(column: str, count: int) -> str:
        return f"{name(column)} IN ({', '.join([mark] * count)})"

    minutes = [minute for minute, _ in replaced]
    uuids = sorted({uuid for _, gpus in replaced for uuid in gpus})
    sql = (
        f"DELETE FROM {name('gpu_minute_holders')} WHERE {name('cluster')} = {mark}"
        f" AND {name('node_name')} = {mark} AND {among('minute', len(minutes))}"
        f" AND {among('gpu_uuid', len(uuids))}"
    )
    values: list[object] = [*minutes, *uuids]
    if any(set(gpus) != set(uuids) for _, gpus in replaced):  # not every GPU in every minute
        pairs = [
            f"({name('minute')} = {mark} AND {among('gpu_uuid', len(g))})" for _, g in replaced
        ]
        sql += f" AND ({' OR '.join(pairs)})"
        values += [value for minute, gpus in replaced for value in (minute, *gpus)]
    return sql, values


def _at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def _hour_of(minute: datetime.datetime) -> datetime.datetime:
    return minute.replace(minute=0, second=0, microsecond=0)


def _replaced(
    minutes: Sequence[GpuMinute], at: Callable[[int], datetime.datetime]
) -> tuple[tuple[datetime.datetime, tuple[str, ...]], ...]:
    by_minute: dict[datetime.datetime, list[str]] = {}
    for minute in minutes:
        by_minute.setdefault(at(minute.start), []).append(minute.uuid)
    return tuple((minute, tuple(uuids)) for minute, uuids in sorted(by_minute.items()))
