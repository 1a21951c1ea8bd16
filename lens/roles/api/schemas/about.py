"""The payload of /v1/about: what a client (the dashboard) needs to know of this API."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lens.roles.api.schemas.measured import Measured


class Sources(BaseModel):
    """What feeds the figures, and when each last did: a client tells "nothing yet" from
    "nothing is running" (never measured: as_of null) and from "it stopped" (stale)."""

    controller: Measured = Field(description="`lens controller`'s watch of pods and workloads.")
    node_info: Measured = Field(description="`lens jobs`' node info (the nodes table).")
    agents: Measured = Field(
        description="The node agents' readings: the newest GPU-minute stored (as_of its start)."
    )
    idle: Measured = Field(description="`lens jobs`' idle GPUs.")
    gpu_hours: Measured = Field(description="`lens jobs`' GPU-hours per day.")


class About(BaseModel):
    version: str = Field(description="Lens's version.")
    cluster: str = Field(description="The cluster a request naming none reads.")
    team_label: str = Field(description="The label GPU-hours are kept by as teams ('' : none).")
    gpu_hours_labels: list[str] = Field(
        description="Every label key /v1/gpuHours can group by (`label:<key>`)."
    )
    simulated: bool = Field(description="The cluster is simulated (`lens demo`).")
    now: float = Field(
        description="The API's time (Unix seconds): the end of the ranges a client shows as "
        "'the last hour' (the cluster's time, where `lens demo --speed` runs it faster)."
    )
    clock_rate: float = Field(
        description="Seconds of the API's time in a second of real time now: 1, or how fast "
        "`lens demo` runs its cluster (its --speed, less while the host cannot keep up)."
    )
    max_page_size: int = Field(
        description="The largest page_size a list takes (api.max_page_size)."
    )
    sources: Sources
