// Lens netflow: TCP flows aggregated in the kernel, from six tracepoints.
//
// Why tracepoints: where kprobes and fentry are unavailable tracepoints still work. Two ways to
// attach, one program (lens/netflow/loader.py picks):
// - LENS_RAW: raw tracepoints, which hand the program the kernel's own arguments (the socket's
//   address) without first filling the record an ordinary tracepoint fills for every hit —
//   about a third less for a connection (PERFORMANCE.md). The socket's endpoints, protocol and smoothed RTT are read
//   at offsets taken from the running kernel's BTF (lens/netflow/socklayout.py), never from
//   headers: `struct sock` read through headers of another kernel gives wrong values.
// - otherwise, ordinary tracepoints: bcc lays out each one's record from tracefs at run time, so
//   no kernel struct layout is needed at all (a kernel without BTF).
// Sockets are joined by their address, from the connection's establishment (or its first
// segment seen) to its destruction. Userspace reads the live sockets' counters every interval
// (they only grow). A socket that ends after userspace may have read it leaves its final
// counters in `closed`; one that ends unread — most short connections — is summed in the kernel
// into `ended`, by peer and server port: userspace reads a record per peer, not per connection,
// and never per packet. Which is which: `reads`, below.

#define LENS_AF_INET 2
#define LENS_AF_INET6 10
#define LENS_IPPROTO_TCP 6
#define LENS_TCP_ESTABLISHED 1
#define LENS_TCP_SYN_SENT 2
#define LENS_TCP_SYN_RECV 3
#define LENS_MSG_PEEK 2

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
    u64 born;  // `reads` when the socket was first met
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
// The walks of `flows` userspace has begun: it adds one before each, and reads only sockets
// born before that (`born` < `reads`), so a socket born before the current count may have been
// read and one born since has not. (A mark per socket read, in a hash map, cost a connection
// two lookups more at its end, and userspace a write per socket per interval.)
BPF_ARRAY(reads, u64, 1);
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
    int reads_key = 0;
    u64 *begun = reads.lookup(&reads_key);
    // Read without a barrier: a count read just before userspace raised it makes `born` one
    // lower, so the socket may be read in that walk, and is handed over in `closed` at its end
    // — as one born before. (Never higher: no double count.)
    flow->born = begun ? *begun : 0;
    if (flows.update(&sk, flow) != 0) {
        lens_drop(0);
    }
}

static inline void lens_established(u64 sk, struct flow_t *flow, int oldstate) {
    flow->opened = oldstate == LENS_TCP_SYN_SENT ? LENS_OPENED_HERE : LENS_OPENED_THERE;
    flow->rtt_min_us = 0xffffffff;
    lens_put(sk, flow);
}

static inline int lens_opens(int oldstate, int newstate) {
    return newstate == LENS_TCP_ESTABLISHED &&
           (oldstate == LENS_TCP_SYN_SENT || oldstate == LENS_TCP_SYN_RECV);
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
// is taken out of `flows` before `reads` is looked at, and with an atomic (a full barrier): had
// userspace's walk met the entry, its count was raised before, and is seen here; so a socket
// it may have read is always handed over whole in `closed`, never summed.
static inline void lens_destroyed(u64 sk) {
    struct flow_t *flow = flows.lookup(&sk);
    if (!flow) {
        return;
    }
    struct flow_t last = *flow;
    last.closed = 1;
    flows.delete(&sk);
    int reads_key = 0;
    u64 *begun = reads.lookup(&reads_key);
    if (begun && last.born < __sync_fetch_and_add(begun, 0)) {
        struct closed_key_t key = {.sk = sk, .ns = bpf_ktime_get_ns()};
        if (closed.update(&key, &last) != 0) {
            lens_drop(1);
        }
        return;
    }
    lens_add_ended(&last);
}

// A segment received on an established socket. `fresh` holds the socket's endpoints for one
// open before Lens (first seen here; family 0 when they cannot be had). The counters are added
// without atomics: the kernel processes a socket's incoming segments one at a time, under the
// socket's lock, and nothing else writes these fields.
static inline void lens_segment(u64 sk, u32 srtt, struct flow_t *flow, struct flow_t *fresh) {
    if (!flow) {
        if (fresh->family != LENS_AF_INET && fresh->family != LENS_AF_INET6) {
            return;
        }
        fresh->opened = LENS_OPENED_UNKNOWN;
        fresh->rtt_min_us = 0xffffffff;
        lens_put(sk, fresh);
        flow = flows.lookup(&sk);
        if (!flow) {
            return;
        }
    }
    flow->segments_in += 1;
    if (srtt > 0) {
        flow->rtt_sum_us += srtt;
        flow->rtt_count += 1;
        if (srtt < flow->rtt_min_us) {
            flow->rtt_min_us = srtt;
        }
        if (srtt > flow->rtt_max_us) {
            flow->rtt_max_us = srtt;
        }
    }
}

// Sends and receives may run on several CPUs at once for one socket (threads sharing it), out
// of the socket's lock: atomic adds.
static inline void lens_sent(u64 sk, int bytes) {
    if (bytes <= 0) {
        return;
    }
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        __sync_fetch_and_add(&flow->sent, (u64)bytes);
    }
}

// A peek (MSG_PEEK) leaves the bytes to be read again: counted when they are.
static inline void lens_received(u64 sk, int bytes, int flags) {
    if (bytes <= 0 || (flags & LENS_MSG_PEEK)) {
        return;
    }
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        __sync_fetch_and_add(&flow->received, (u64)bytes);
    }
}

// Under the socket's lock (the retransmit timer or its owner), as segments are.
static inline void lens_retransmitted(u64 sk) {
    struct flow_t *flow = flows.lookup(&sk);
    if (flow) {
        flow->retransmits += 1;
    }
}

#ifdef LENS_RAW
// Named lens_raw_<tracepoint>, not with bcc's RAW_TRACEPOINT_PROBE: bcc attaches those itself
// as it loads them, so one refused by the verifier would leave the ones before it attached;
// lens/netflow/loader.py loads and attaches each, and detaches them all when one fails.

// One read of the start of `struct sock_common`, where the IPv4 endpoints, the ports and the
// family lie (LENS_HEAD_*: its offset and size, and each field's place in it).
static inline void lens_endpoints(u64 sk, struct flow_t *flow) {
    u8 head[LENS_HEAD_SIZE] = {};
    if (bpf_probe_read_kernel(head, sizeof(head), (void *)(sk + LENS_HEAD_AT)) != 0) {
        return;
    }
    u16 family, dport;
    __builtin_memcpy(&family, head + LENS_AT_FAMILY, 2);
    __builtin_memcpy(&flow->local_port, head + LENS_AT_NUM, 2);
    __builtin_memcpy(&dport, head + LENS_AT_DPORT, 2);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    dport = __builtin_bswap16(dport);  // network order in the socket
#endif
    flow->remote_port = dport;
    if (family == LENS_AF_INET) {
        __builtin_memcpy(flow->local_addr, head + LENS_AT_RCV_SADDR, 4);
        __builtin_memcpy(flow->remote_addr, head + LENS_AT_DADDR, 4);
    } else if (family == LENS_AF_INET6) {
        bpf_probe_read_kernel(flow->local_addr, 16, (void *)(sk + LENS_OFF_V6_RCV_SADDR));
        bpf_probe_read_kernel(flow->remote_addr, 16, (void *)(sk + LENS_OFF_V6_DADDR));
    } else {
        return;
    }
    flow->family = family;
}

int lens_raw_inet_sock_set_state(struct bpf_raw_tracepoint_args *ctx) {
    // (const struct sock *sk, const int oldstate, const int newstate)
    int oldstate = (int)ctx->args[1];
    if (!lens_opens(oldstate, (int)ctx->args[2])) {
        return 0;
    }
    u64 sk = ctx->args[0];
    u16 protocol = 0;
    // MPTCP's own sockets change state here too; their subflows are TCP sockets of their own.
    bpf_probe_read_kernel(&protocol, 2, (void *)(sk + LENS_OFF_PROTOCOL));
    if (protocol != LENS_IPPROTO_TCP) {
        return 0;
    }
    struct flow_t flow = {};
    lens_endpoints(sk, &flow);
    if (flow.family == 0) {
        return 0;
    }
    lens_established(sk, &flow, oldstate);
    return 0;
}

int lens_raw_tcp_destroy_sock(struct bpf_raw_tracepoint_args *ctx) {
    lens_destroyed(ctx->args[0]);  // (struct sock *sk)
    return 0;
}

int lens_raw_tcp_probe(struct bpf_raw_tracepoint_args *ctx) {
    u64 sk = ctx->args[0];  // (struct sock *sk, const struct sk_buff *skb)
    u32 srtt_us8 = 0;       // tcp_sock.srtt_us holds 8 times the smoothed RTT
    bpf_probe_read_kernel(&srtt_us8, 4, (void *)(sk + LENS_OFF_SRTT_US));
    struct flow_t *flow = flows.lookup(&sk);
    struct flow_t fresh = {};
    if (!flow) {
        lens_endpoints(sk, &fresh);
    }
    lens_segment(sk, srtt_us8 >> 3, flow, &fresh);
    return 0;
}

// Every socket's sends and receives, TCP's or not: a socket not in `flows` is passed over by
// its lookup, which costs no more than reading its protocol would.
int lens_raw_sock_send_length(struct bpf_raw_tracepoint_args *ctx) {
    lens_sent(ctx->args[0], (int)ctx->args[1]);  // (struct sock *sk, int ret, int flags)
    return 0;
}

int lens_raw_sock_recv_length(struct bpf_raw_tracepoint_args *ctx) {
    // (struct sock *sk, int ret, int flags)
    lens_received(ctx->args[0], (int)ctx->args[1], (int)ctx->args[2]);
    return 0;
}

int lens_raw_tcp_retransmit_skb(struct bpf_raw_tracepoint_args *ctx) {
    lens_retransmitted(ctx->args[0]);  // (const struct sock *sk, const struct sk_buff *skb, ...)
    return 0;
}

#else

TRACEPOINT_PROBE(sock, inet_sock_set_state) {
    if (args->protocol != LENS_IPPROTO_TCP || !lens_opens(args->oldstate, args->newstate)) {
        return 0;
    }
    struct flow_t flow = {};
    flow.family = args->family;
    flow.local_port = args->sport;
    flow.remote_port = args->dport;
    if (args->family == LENS_AF_INET) {
        __builtin_memcpy(flow.local_addr, args->saddr, 4);
        __builtin_memcpy(flow.remote_addr, args->daddr, 4);
    } else {
        __builtin_memcpy(flow.local_addr, args->saddr_v6, 16);
        __builtin_memcpy(flow.remote_addr, args->daddr_v6, 16);
    }
    lens_established((u64)args->skaddr, &flow, args->oldstate);
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_destroy_sock) {
    lens_destroyed((u64)args->skaddr);
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_probe) {
    u64 sk = (u64)args->skaddr;
    struct flow_t *flow = flows.lookup(&sk);
    struct flow_t fresh = {};
    if (!flow) {
        // The tuple from this segment's addresses (sockaddr_in or sockaddr_in6 bytes; the
        // address at offset 4 or 8), saddr being the local side.
        fresh.family = args->family;
        fresh.local_port = args->sport;
        fresh.remote_port = args->dport;
        if (args->family == LENS_AF_INET) {
            __builtin_memcpy(fresh.local_addr, args->saddr + 4, 4);
            __builtin_memcpy(fresh.remote_addr, args->daddr + 4, 4);
        } else {
            __builtin_memcpy(fresh.local_addr, args->saddr + 8, 16);
            __builtin_memcpy(fresh.remote_addr, args->daddr + 8, 16);
        }
    }
    lens_segment(sk, args->srtt, flow, &fresh);
    return 0;
}

TRACEPOINT_PROBE(sock, sock_send_length) {
    if (args->protocol == LENS_IPPROTO_TCP) {
        lens_sent((u64)args->sk, args->ret);
    }
    return 0;
}

TRACEPOINT_PROBE(sock, sock_recv_length) {
    if (args->protocol == LENS_IPPROTO_TCP) {
        lens_received((u64)args->sk, args->ret, args->flags);
    }
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_retransmit_skb) {
    lens_retransmitted((u64)args->skaddr);
    return 0;
}

#endif
