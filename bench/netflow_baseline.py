"""The original network exporter's way, for the netflow benchmark: the same tracepoints, but one
record per event sent to userspace through a BPF ring buffer (the original's per-segment
records), decoded and summed there in Python. Run as a process of its own (`python
bench/netflow_baseline.py`): prints `ready` once attached, runs until SIGTERM, then prints the
events it decoded."""

from __future__ import annotations

import ctypes
import json
import signal
import threading

from lens.netflow.loader import import_bcc

PROGRAM = rb"""
struct event_t {
    u64 sk;
    u32 bytes;
    u32 srtt;
    u16 sport;
    u16 dport;
    u8 kind;
};
BPF_RINGBUF_OUTPUT(events, 1 << 12);

static inline void emit(u64 sk, u32 bytes, u32 srtt, u16 sport, u16 dport, u8 kind) {
    struct event_t *event = events.ringbuf_reserve(sizeof(struct event_t));
    if (!event) {
        return;
    }
    event->sk = sk;
    event->bytes = bytes;
    event->srtt = srtt;
    event->sport = sport;
    event->dport = dport;
    event->kind = kind;
    events.ringbuf_submit(event, 0);
}

TRACEPOINT_PROBE(tcp, tcp_probe) {
    emit((u64)args->skaddr, args->data_len, args->srtt, args->sport, args->dport, 0);
    return 0;
}

TRACEPOINT_PROBE(sock, inet_sock_set_state) {
    if (args->protocol == 6) {
        emit((u64)args->skaddr, 0, 0, args->sport, args->dport, 1);
    }
    return 0;
}

TRACEPOINT_PROBE(sock, sock_send_length) {
    if (args->protocol == 6 && args->ret > 0) {
        emit((u64)args->sk, args->ret, 0, 0, 0, 2);
    }
    return 0;
}
"""


class Event(ctypes.Structure):
    _fields_ = [
        ("sk", ctypes.c_uint64),
        ("bytes", ctypes.c_uint32),
        ("srtt", ctypes.c_uint32),
        ("sport", ctypes.c_uint16),
        ("dport", ctypes.c_uint16),
        ("kind", ctypes.c_uint8),
    ]


def main() -> None:
    bcc = import_bcc()
    program = bcc.BPF(text=PROGRAM)
    flows: dict[tuple[int, int, int], list[int]] = {}
    decoded = [0]

    def on_event(_context: object, data: int, _size: int) -> None:
        event = ctypes.cast(data, ctypes.POINTER(Event)).contents
        entry = flows.setdefault((event.sk, event.sport, event.dport), [0, 0, 0])
        entry[0] += event.bytes
        entry[1] += event.srtt
        entry[2] += 1
        decoded[0] += 1

    program[b"events"].open_ring_buffer(on_event)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print("ready", flush=True)
    while not stopped.is_set():
        program.ring_buffer_poll(100)
    program.ring_buffer_consume()
    print(json.dumps({"events": decoded[0], "flows": len(flows)}), flush=True)
    program.cleanup()


if __name__ == "__main__":
    main()
