// Lens netflow: TCP flows aggregated in the kernel from tracepoint arguments only.
//
// Why tracepoints only: where kprobes and fentry are unavailable tracepoints still work, and bcc
// builds each tracepoint's argument struct from tracefs at run time, so this program needs no
// kernel struct layout (reading `struct sock` through mismatched headers gives wrong values).
// Sockets are joined by their address (the `skaddr`/`sk` every one of these tracepoints
// carries), from the connection's establishment (or its first segment seen) to its destruction.
// Userspace reads the live sockets' counters every interval (they only grow). A socket that ends
// after userspace has read it (marked in `seen`) leaves its final counters in `closed`; one that
// ends unread — most short connections — is summed in the kernel into `ended`, by peer and
// server port: userspace reads a record per peer, not per connection, and never per packet.

#define LENS_AF_INET 2
#define LENS_AF_INET6 10
#define LENS_IPPROTO_TCP 6
#define LENS_TCP_ESTABLISHED 1
#define LENS_TCP_SYN_SENT 2
#define LENS_TCP_SYN_RECV 3

// Who opened the connection: this side (connect), the other (accept), or unknown (open before
// the program was loaded, first seen by a segment).
#define LENS_OPENED_HERE 0
#define LENS_OPENED_THERE 1
#define LENS_OPENED_UNKNOWN 2

struct flow_t {
    u64 sent;         // bytes the application sent (sock_send_length)
    u64 received;     // bytes the application read (sock_recv_length)
    u64 segments_in;  // segments received on the established socket (tcp_probe)
    u64 rtt_sum_us;   // smoothed RTT at each segment, summed (tcp_probe srtt, microseconds)
    u64 rtt_count;
    u64 retransmits;  // tcp_retransmit_skb
    u32 rtt_min_us;
    u32 rtt_max_us;
    u16 family;
    u16 local_port;   // host order, as the tracepoints give them
    u16 remote_port;
    u8 opened;
    u8 closed;
    u8 local_addr[16];   // IPv4 in the first 4 bytes
    u8 remote_addr[16];
};

struct closed_key_t {
    u64 sk;
    u64 ns;  // when it closed: an address reused at once is another key
};

// Sockets that ended unread, summed: by who opened them, the peer, and the server's port (the
// peer's when this side opened, this side's when the peer did; both when unknown), never by an
// ephemeral port, so a peer's thousands of connections are one entry.
struct ended_key_t {
    u16 family;
    u8 opened;
    u8 pad;
    u16 local_port;
    u16 remote_port;
    u8 local_addr[16];
    u8 remote_addr[16];
};

struct ended_t {
    u64 sent;
    u64 received;
    u64 segments_in;
    u64 rtt_sum_us;
    u64 rtt_count;
    u64 retransmits;
    u64 sockets;
};

BPF_HASH(flows, u64, struct flow_t, LENS_MAX_FLOWS);
BPF_HASH(closed, struct closed_key_t, struct flow_t, LENS_MAX_CLOSED);
// Per CPU: connections of one peer end on every CPU at once, and a shared sum would make them
// wait on each other's atomic adds. Userspace adds the CPUs' sums.
BPF_PERCPU_HASH(ended, struct ended_key_t, struct ended_t, LENS_MAX_ENDED);
// Sockets userspace has read (it marks each before reading it); least recently used ones go
// when full, as a mark left by a socket address reused is harmless.
BPF_TABLE("lru_hash", u64, u8, seen, LENS_MAX_FLOWS);
// 0: a flow not tracked because `flows` was full; 1: a socket's end lost because `closed` or
// `ended` was.
BPF_ARRAY(dropped, u64, 2);

static inline void lens_drop(int which) {
    u64 *count = dropped.lookup(&which);
    if (count) {
        __sync_fetch_and_add(count, 1);
    }
}

static inline void lens_put(u64 sk, struct flow_t *flow) {
    if (flows.update(&sk, flow) != 0) {
        lens_drop(0);
    }
}

TRACEPOINT_PROBE(sock, inet_sock_set_state) {
    if (args->protocol != LENS_IPPROTO_TCP || args->newstate != LENS_TCP_ESTABLISHED) {
        return 0;
    }
    if (args->oldstate != LENS_TCP_SYN_SENT && args->oldstate != LENS_TCP_SYN_RECV) {
        return 0;
    }
    u64 sk = (u64)args->skaddr;
    struct flow_t flow = {};
    flow.family = args->family;
    flow.local_port = args->sport;
    flow.remote_port = args->dport;
    flow.opened = args->oldstate == LENS_TCP_SYN_SENT ? LENS_OPENED_HERE : LENS_OPENED_THERE;
    flow.rtt_min_us = 0xffffffff;
    if (args->family == LENS_AF_INET) {
        __builtin_memcpy(flow.local_addr, args->saddr, 4);
        __builtin_memcpy(flow.remote_addr, args->daddr, 4);
    } else {
        __builtin_memcpy(flow.local_addr, args->saddr_v6, 16);
        __builtin_memcpy(flow.remote_addr, args->daddr_v6, 16);
    }
    lens_put(sk, &flow);
    return 0;
}

static inline void lens_add_ended(struct flow_t *last) {
    struct ended_key_t key = {};
    key.family = last->family;
    key.opened = last->opened;
    if (last->opened != LENS_OPENED_HERE) {
        key.local_port = last->local_port;
    }
    if (last->opened != LENS_OPENED_THERE) {
        key.remote_port = last->remote_port;
    }
    __builtin_memcpy(key.local_addr, last->local_addr, 16);
    __builtin_memcpy(key.remote_addr, last->remote_addr, 16);
    struct ended_t zero = {};
    struct ended_t *sum = ended.lookup_or_try_init(&key, &zero);
    if (!sum) {
        lens_drop(1);
        return;
    }
    // This CPU's own copy: no other program writes it meanwhile.
    sum->sent += last->sent;
    sum->received += last->received;
    sum->segments_in += last->segments_in;
    sum->rtt_sum_us += last->rtt_sum_us;
    sum->rtt_count += last->rtt_count;
    sum->retransmits += last->retransmits;
    sum->sockets += 1;
}

// The socket's end: on destruction, not on TCP_CLOSE, because a socket the peer closed reaches
// TCP_CLOSE while its application may still be reading what arrived before the FIN. The entry
// is taken out of `flows` before `seen` is asked: userspace marks a socket before reading it,
// so a socket it may have read is always handed over whole in `closed`, never summed.
TRACEPOINT_PROBE(tcp, tcp_destroy_sock) {
    u64 sk = (u64)args->skaddr;
    struct flow_t *flow = flows.lookup(&sk);
    if (!flow) {
        return 0;
    }
    struct flow_t last = *flow;
    last.closed = 1;
    flows.delete(&sk);
    if (seen.lookup(&sk)) {
        seen.delete(&sk);
        struct closed_key_t key = {.sk = sk, .ns = bpf_ktime_get_ns()};
        if (closed.update(&key, &last) != 0) {
            lens_drop(1);
        }
        return 0;
    }
    lens_add_ended(&last);
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_probe) {
    u64 sk = (u64)args->skaddr;
    struct flow_t *flow = flows.lookup(&sk);
    if (!flow) {
        // A connection open before Lens: its tuple from this segment's addresses (sockaddr_in
        // or sockaddr_in6 bytes; the address at offset 4 or 8), saddr being the local side.
        if (args->family != LENS_AF_INET && args->family != LENS_AF_INET6) {
            return 0;
        }
        struct flow_t fresh = {};
        fresh.family = args->family;
        fresh.local_port = args->sport;
        fresh.remote_port = args->dport;
        fresh.opened = LENS_OPENED_UNKNOWN;
        fresh.rtt_min_us = 0xffffffff;
        if (args->family == LENS_AF_INET) {
            __builtin_memcpy(fresh.local_addr, args->saddr + 4, 4);
            __builtin_memcpy(fresh.remote_addr, args->daddr + 4, 4);
        } else {
            __builtin_memcpy(fresh.local_addr, args->saddr + 8, 16);
            __builtin_memcpy(fresh.remote_addr, args->daddr + 8, 16);
        }
        lens_put(sk, &fresh);
        flow = flows.lookup(&sk);
        if (!flow) {
            return 0;
        }
    }
    __sync_fetch_and_add(&flow->segments_in, 1);
    u32 srtt = args->srtt;
    if (srtt > 0) {
        __sync_fetch_and_add(&flow->rtt_sum_us, srtt);
        __sync_fetch_and_add(&flow->rtt_count, 1);
        // Races between CPUs may keep a slightly wider min or max; the sum and count are exact.
        if (srtt < flow->rtt_min_us) {
            flow->rtt_min_us = srtt;
        }
        if (srtt > flow->rtt_max_us) {
            flow->rtt_max_us = srtt;
        }
    }
    return 0;
}

TRACEPOINT_PROBE(sock, sock_send_length) {
    if (args->protocol != LENS_IPPROTO_TCP || args->ret <= 0) {
        return 0;
    }
    u64 sk = (u64)args->sk;
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        __sync_fetch_and_add(&flow->sent, (u64)args->ret);
    }
    return 0;
}

TRACEPOINT_PROBE(sock, sock_recv_length) {
    if (args->protocol != LENS_IPPROTO_TCP || args->ret <= 0) {
        return 0;
    }
    u64 sk = (u64)args->sk;
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        __sync_fetch_and_add(&flow->received, (u64)args->ret);
    }
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_retransmit_skb) {
    u64 sk = (u64)args->skaddr;
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        __sync_fetch_and_add(&flow->retransmits, 1);
    }
    return 0;
}
