from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.containers.model import Container, ContainerEvent, EventType, Source
from lens.containers.server import lifecycle
from lens.containers.server.lifecycle import RANK, State

STATUS_OF = {
    EventType.CREATED: "Created",
    EventType.STARTED: "Running",
    EventType.OOM_KILLED: "OOMKilled",
    EventType.EXITED: "Exit",
    EventType.DELETED: "Deleted",
}


def _event(kind: EventType, status: str, code: int | None = None, cid: str = "a") -> ContainerEvent:
    container = Container(
        id=cid, name="main", pod=None, devices=(), created_at=1.0, status=status, exit_code=code
    )
    exit_code = code if kind is EventType.EXITED else None
    return ContainerEvent(
        type=kind, source=Source.CONTAINERD, container=container, time=5.0, exit_code=exit_code
    )


def test_a_lifecycle_in_order_is_stored_as_told() -> None:
    told = [
        _event(EventType.CREATED, "Created"),
        _event(EventType.STARTED, "Running"),
        _event(EventType.EXITED, "Exit", 3),
        _event(EventType.DELETED, "Deleted", 3),
    ]
    folded = lifecycle.fold({}, told)
    assert folded.states == {"a": State(status="Deleted", exit_code=3, exit_told=True)}
    assert folded.dropped == frozenset()


def test_a_listing_that_says_created_after_an_exit_does_not_step_back() -> None:
    """An agent of before issue 16's fixes listed a task deleted after its exit as Created with
    no code, and its deletion then stored no code (point 1)."""
    stored = {"a": State(status="Exit", exit_code=3)}
    later = [_event(EventType.OBSERVED, "Created"), _event(EventType.DELETED, "Deleted")]
    folded = lifecycle.fold(stored, later)
    assert folded.states["a"] == State(status="Deleted", exit_code=3)


def test_an_exit_told_again_neither_erases_the_code_nor_adds_a_row() -> None:
    """A restarted agent tells again of an exit it cannot know was stored: with its code
    unknown (inferred) or at another time (it no longer knows the start it was stamped after)."""
    stored = {"a": State(status="Exit", exit_code=3, exit_told=True)}
    for again in (_event(EventType.EXITED, "Exit"), _event(EventType.EXITED, "Exit", 3)):
        folded = lifecycle.fold(stored, [again])
        assert (folded.states["a"], folded.dropped) == (stored["a"], frozenset({0}))
    # Unknown before, known now: the code is taken, and the row that has it stored.
    unknown = {"a": State(status="Exit", exit_code=None, exit_told=True)}
    folded = lifecycle.fold(unknown, [_event(EventType.EXITED, "Exit", 4)])
    assert (folded.states["a"].exit_code, folded.dropped) == (4, frozenset())


def test_a_container_listed_as_exited_gets_its_exit_row() -> None:
    """A listing reports an exited container as created, already exited, then its exit: the
    status says Exit before the exit is told, which is no reason to drop it."""
    stored = {"a": State(status="Running", exit_code=None)}
    told = [
        _event(EventType.CREATED, "Exit", 10),
        _event(EventType.OBSERVED, "Exit", 10),
        _event(EventType.EXITED, "Exit", 10),
    ]
    folded = lifecycle.fold(stored, told)
    assert folded.states["a"] == State(status="Exit", exit_code=10, exit_told=True)
    assert folded.dropped == frozenset()
    # The same across two batches (a batch may end between them): the stored row says Exit.
    folded = lifecycle.fold({"a": State(status="Exit", exit_code=10)}, told[2:])
    assert folded.dropped == frozenset()


def test_a_late_start_after_a_deletion_adds_nothing_and_an_exit_gives_its_code() -> None:
    stored = {"a": State(status="Deleted", exit_code=None)}
    told = [_event(EventType.STARTED, "Running"), _event(EventType.EXITED, "Exit", 2)]
    folded = lifecycle.fold(stored, told)
    assert folded.states["a"] == State(status="Deleted", exit_code=2, exit_told=True)
    assert folded.dropped == frozenset({0})


def test_a_restart_runs_again_and_a_reused_id_begins_anew() -> None:
    folded = lifecycle.fold(
        {"a": State(status="Exit", exit_code=1)}, [_event(EventType.STARTED, "Running")]
    )
    assert folded.states["a"].status == "Running"
    folded = lifecycle.fold(
        {"a": State(status="Deleted", exit_code=1)}, [_event(EventType.CREATED, "Created")]
    )
    assert folded.states["a"] == State(status="Created", exit_code=None, exit_told=False)


_EVENTS = st.builds(
    lambda kind, code, cid: _event(kind, STATUS_OF.get(kind, "Running"), code, cid),
    st.sampled_from(list(EventType)),
    st.one_of(st.none(), st.integers(0, 255)),
    st.sampled_from(["a", "b"]),
)
_STATES = st.builds(
    State,
    status=st.sampled_from(sorted(RANK)),
    exit_code=st.one_of(st.none(), st.integers(0, 255)),
    exit_told=st.booleans(),
)


@given(
    stored=st.dictionaries(st.sampled_from(["a", "b"]), _STATES),
    told=st.lists(_EVENTS, max_size=12),
)
def test_a_stored_status_steps_back_only_for_a_restart_or_a_reused_id(
    stored: dict[str, State], told: list[ContainerEvent]
) -> None:
    """Issue 16, points 1 and 2: whatever events arrive, in whatever order, a row never goes
    back along the lifecycle (but for a start after an exit and a creation after a deletion),
    and a known exit code of an exited container is never replaced by an unknown one."""
    states = dict(stored)
    befores: list[State | None] = []
    for event in told:
        before = states.get(event.container.id)
        befores.append(before)
        after, _ = lifecycle.advance(before, event)
        states[event.container.id] = after
        if before is None:
            continue
        if RANK[after.status] < RANK[before.status]:
            assert (event.type, before.status != "Deleted") == (EventType.STARTED, True) or (
                event.type,
                before.status,
            ) == (EventType.CREATED, "Deleted")
        exited = ("Exit", "Deleted")
        if before.exit_code is not None and before.status in exited and after.status in exited:
            assert after.exit_code is not None
    folded = lifecycle.fold(stored, told)
    assert folded.states == states
    # One Exit row per run: after one is stored, another is only if it brings the code.
    for position, (event, before) in enumerate(zip(told, befores, strict=True)):
        if event.type is EventType.EXITED and position not in folded.dropped and before:
            assert not before.exit_told or (
                before.exit_code is None and event.exit_code is not None
            )
