"""When a payload's figures were measured: `as_of` of each group of figures that comes from one
source (the nodes table, the latest complete minute, ...) and whether it is stale, so that a
reader tells a figure of two minutes ago from one of two hours ago."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Measured(BaseModel):
    as_of: int | None = Field(
        description="Unix seconds the figures are of (a minute's start for per-minute figures); "
        "null: never measured."
    )
    stale: bool = Field(
        description="Older than twice the interval they are measured at (beyond their designed "
        "delay), or never measured: what measures them is behind or not running."
    )
