"""Containers on a node, the GPU and RDMA devices each was given, and their lifecycle events.

`model` is the vocabulary and `wire` the delivery protocol (lens.v1 messages) both sides share;
`node` is the agent's side (runtimes, tracking, attribution, journal, outbox, shipping) and
`server` the jobs role's side (receiving, recording). The two sides never import each other."""

__all__: list[str] = []
