"""A stored container's lifecycle: created, running, exited, deleted, and never back.

recording.py folds each batch's events onto the stored node_containers rows with `fold`, so a
row keeps its place in the lifecycle and its exit code whatever order events arrive in and
whatever a restarted agent, which knows less, reports (issue 16, points 1 and 2).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence

from lens.containers.model import ContainerEvent, EventType
from lens.store import models

# How far along the lifecycle each status is. OOMKilled comes before Exit: a kill is told
# before the exit it causes, and the status after that exit is Exit (code 137).
RANK = {"Created": 0, "Running": 1, "OOMKilled": 2, "Exit": 3, "Deleted": 4}
_EXITED = ("Exit", "Deleted")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class State:
    """What a node_containers row says of the lifecycle."""

    status: str
    exit_code: int | None
    # Whether an Exit row of the current run is stored (one after the last Running row): the
    # status alone cannot tell, as a listing reports an exited container as created exited.
    exit_told: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Folded:
    """Each container's state after a run of events, and which of the events (by position)
    add no event row: they tell of a change the stored lifecycle already has, or rejects."""

    states: dict[str, State]
    dropped: frozenset[int]


def advance(state: State | None, event: ContainerEvent) -> tuple[State, bool]:
    """The state after `event`, and whether its event row is stored.

    A status never steps back (as an agent before issue 16's fixes made it, listing a task
    deleted after its exit as Created), except for a start after an exit (a restart: the agent
    tells of one only for a new run) and a creation after a deletion (a container id used
    again). An exit code, once known, is not erased by an exit whose code is unknown (an agent
    that restarted and found the task gone infers one). An exit told of an exited container
    (no start between) is the same exit told again, by a restarted agent that knows its time
    less exactly: it adds no second row, unless it brings the code the first lacked.
    """
    exited = event.type is EventType.EXITED
    told = State(
        status=event.container.status, exit_code=event.container.exit_code, exit_told=exited
    )
    if state is None:
        return told, True
    new, old = RANK.get(told.status), RANK.get(state.status)
    repeat = exited and state.exit_told and (event.exit_code is None or state.exit_code is not None)
    forward = new is None or old is None or new >= old
    restart = event.type is EventType.STARTED and state.status != "Deleted"
    reused = event.type is EventType.CREATED and state.status == "Deleted"
    if forward or restart or reused:
        code = told.exit_code
        if code is None and told.status in _EXITED and state.status in _EXITED:
            code = state.exit_code
        exit_told = exited or (state.exit_told and not (restart or reused))
        return State(status=told.status, exit_code=code, exit_told=exit_told), not repeat
    # A step back: the stored status stays; a late exit still gives its code if none is known.
    code = state.exit_code
    if code is None and exited:
        code = event.exit_code
    keep_row = not (repeat or event.type is EventType.STARTED)
    exit_told = state.exit_told or (exited and keep_row)
    return State(status=state.status, exit_code=code, exit_told=exit_told), keep_row


def fold(stored: Mapping[str, State], events: Sequence[ContainerEvent]) -> Folded:
    """`events` (in order) applied to the stored states of their containers."""
    states = dict(stored)
    dropped: set[int] = set()
    for position, event in enumerate(events):
        cid = event.container.id
        states[cid], keep_row = advance(states.get(cid), event)
        if not keep_row and event.type is not EventType.OBSERVED:
            dropped.add(position)
    return Folded(states=states, dropped=frozenset(dropped))


def read_states(cluster: str, told: Sequence[ContainerEvent]) -> dict[str, State]:
    """The stored states of the containers of `told` (those stored), in the caller's
    transaction. Their event rows are read only where an exit told meets a stored exit."""
    table = models.NodeContainer
    ids = sorted({e.container.id for e in told})
    exits = {e.container.id for e in told if e.type is EventType.EXITED}
    states: dict[str, State] = {}
    for start in range(0, len(ids), 500):
        rows = table.select(table.container_id, table.status, table.exit_code).where(
            (table.cluster == cluster) & table.container_id.in_(ids[start : start + 500])
        )
        for row in rows:
            code = row.exit_code
            states[str(row.container_id)] = State(
                status=str(row.status), exit_code=None if code is None else int(code)
            )
    ask = sorted(cid for cid in exits if cid in states and states[cid].status in _EXITED)
    for start in range(0, len(ask), 500):
        for cid in _exits_told(cluster, ask[start : start + 500]):
            states[cid] = dataclasses.replace(states[cid], exit_told=True)
    return states


def _exits_told(cluster: str, container_ids: Sequence[str]) -> set[str]:
    """Those of the containers with an Exit row after their last Running row."""
    table = models.NodeContainerEvent
    rows = table.select(table.container_id, table.event_type, table.created_at).where(
        (table.cluster == cluster)
        & table.container_id.in_(container_ids)
        & table.event_type.in_(("Running", "Exit"))
    )
    latest: dict[str, tuple[datetime.datetime, bool]] = {}
    for row in rows:
        cid, when, is_exit = str(row.container_id), row.created_at, row.event_type == "Exit"
        known = latest.get(cid)
        # Later wins; at the same time an exit (its row stamped no earlier than its start).
        if known is None or (when, is_exit) > known:
            latest[cid] = (when, is_exit)
    return {cid for cid, (_, is_exit) in latest.items() if is_exit}


def correct(cluster: str, states: Mapping[str, State]) -> None:
    """Set these containers' status and exit code (rows whose upsert stepped back)."""
    table = models.NodeContainer
    for cid, state in states.items():
        table.update(status=state.status, exit_code=state.exit_code).where(
            (table.cluster == cluster) & (table.container_id == cid)
        ).execute()
