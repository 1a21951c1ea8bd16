"""How busy each workload keeps the GPUs its pods hold: a load profile (hosts/profiles.py) each,
reproducible from the scenario's seed. Training runs near full, services swing, batch jobs run
steadily; some services, stateful sets and batch jobs and every bare pod sit idle (under 5 %) for
long stretches. Loads change only at whole UTC minutes, in whole percent: a replay that reads GPUs
once a minute, and every 15 s in minutes a pod comes or goes, sees them exactly.
"""

from __future__ import annotations

import random

from lens.sim.hosts import profiles
from lens.sim.hosts.profiles import Profile
from lens.sim.scenario.spec import Scenario, Workload

MINUTE = 60.0
IDLE_SHARE = 0.25  # of services and stateful sets: busy a while, then idle for half an hour or more
STUCK_SHARE = 0.1  # of batch jobs: idle from the start (waiting on something that never comes)
IDLE_LEVELS = (0, 1, 2, 3, 4)  # percent: under the idle floor of 5 %


def workload_loads(scenario: Scenario, *, origin: float) -> dict[tuple[str, str, str], Profile]:
    """Each workload's profile by (namespace, kind, name); `origin`: the scenario's start."""
    return {
        (w.namespace, w.kind, w.name): profile_for(w, seed=scenario.seed, origin=origin)
        for w in scenario.workloads
    }


def profile_for(workload: Workload, *, seed: int, origin: float) -> Profile:
    rng = random.Random(f"{seed}/{workload.namespace}/{workload.kind}/{workload.name}")
    if workload.kind == "PyTorchJob":
        return _training(rng, origin)
    if workload.kind == "Pod":
        return profiles.Stepped(profiles.Constant(rng.choice(IDLE_LEVELS)))
    if workload.kind in ("Job", "CronJob"):
        if rng.random() < STUCK_SHARE:
            return profiles.Stepped(profiles.Constant(rng.choice(IDLE_LEVELS)))
        return profiles.Stepped(profiles.Constant(rng.randint(40, 100)))
    if rng.random() < IDLE_SHARE:
        return _idle_phases(rng, origin)
    return _serving(rng, origin)


def _training(rng: random.Random, origin: float) -> Profile:
    """Busy, with a minute's dip (a checkpoint) every 5 to 15 minutes."""
    every = MINUTE * rng.choice((5, 10, 15))
    return profiles.Stepped(
        profiles.Training(
            busy=rng.randint(90, 99),
            dip=rng.randint(30, 50),
            step_seconds=every,
            dip_seconds=MINUTE,
            offset=MINUTE * rng.randrange(15) - origin,
        )
    )


def _serving(rng: random.Random, origin: float) -> Profile:
    """Traffic swinging between a low and a high over 15 to 60 minutes."""
    period = MINUTE * rng.randint(15, 60)
    return profiles.Stepped(
        profiles.Wave(
            low=rng.randint(10, 40),
            high=rng.randint(60, 98),
            period_seconds=period,
            phase=rng.random() - origin / period,
        )
    )


def _idle_phases(rng: random.Random, origin: float) -> Profile:
    """Busy for 5 to 20 minutes and idle for 35 to 60, in turn; half of them idle first."""
    busy = (float(rng.randint(40, 90)), MINUTE * rng.randint(5, 20))
    idle = (float(rng.choice(IDLE_LEVELS)), MINUTE * rng.randint(35, 60))
    phases = (idle, busy) if rng.random() < 0.5 else (busy, idle)
    return profiles.Stepped(profiles.Phases(phases, origin=origin))
