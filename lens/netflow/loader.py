"""The eBPF backend: `bpf/flows.c` compiled and attached with bcc (Debian's python3-bpfcc), its
maps read each interval into `SocketCounters`. What it needs and lacks (bcc, kernel headers,
tracefs, CAP_BPF) is one NetflowUnavailable line naming it, so the role can say so and fall back.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from lens.netflow import membarrier, sockets, socklayout
from lens.runtime import errors

PROGRAM = Path(__file__).with_name("bpf") / "flows.c"
# Debian's python3-bpfcc installs bcc for the system Python; a virtualenv does not see it.
SYSTEM_PACKAGES = Path("/usr/lib/python3/dist-packages")
TRACEPOINTS = (
    "sock/inet_sock_set_state",
    "sock/sock_send_length",
    "sock/sock_recv_length",
    "tcp/tcp_probe",
    "tcp/tcp_retransmit_skb",
    "tcp/tcp_destroy_sock",
)
TRACEFS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
RAW_FUNCTION = "lens_raw_{}"  # bpf/flows.c's program for each raw tracepoint
MODULES = Path("/lib/modules")


class NetflowUnavailable(errors.SourceError):
    """The eBPF backend cannot run here; the message says what is missing."""


def import_bcc() -> ModuleType:
    """bcc, from this interpreter's packages or else from Debian's python3-bpfcc."""
    try:
        import bcc  # type: ignore[import-not-found]  # Debian's package, no stubs

        return bcc  # type: ignore[no-any-return]
    except ImportError:
        pass
    init = SYSTEM_PACKAGES / "bcc" / "__init__.py"
    if not init.is_file():
        raise NetflowUnavailable(
            "bcc is not installed: install Debian's python3-bpfcc (not the PyPI package 'bcc')"
        )
    spec = importlib.util.spec_from_file_location(
        "bcc", init, submodule_search_locations=[str(init.parent)]
    )
    if spec is None or spec.loader is None:
        raise NetflowUnavailable(f"bcc at {init.parent} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bcc"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # libbcc missing or of another version: whatever bcc raises
        del sys.modules["bcc"]
        raise NetflowUnavailable(f"bcc cannot be loaded ({type(exc).__name__}: {exc})") from None
    return module


def ensure_headers(modules: Path, headers: Path | None) -> None:
    """bcc compiles in `modules`/build: where nothing is there, link `headers` (Debian's layout:
    `linux-headers-<v>-<arch>` beside its `linux-headers-<v>-common`, the `source`); with no
    headers to link, NetflowUnavailable says what to do."""
    build = modules / "build"
    if build.exists():
        return
    if headers is None or not headers.is_dir():
        raise NetflowUnavailable(
            f"no kernel headers for bcc at {build}: link the nearest Debian linux-headers there "
            "and to source, or set netflow.kernel_headers (docs/netflow.md)"
        )
    resolved = headers.resolve()
    common = resolved.with_name(resolved.name.rsplit("-", 1)[0] + "-common")
    try:
        modules.mkdir(parents=True, exist_ok=True)
        build.unlink(missing_ok=True)  # a link to headers that are gone
        build.symlink_to(resolved)
        (modules / "source").unlink(missing_ok=True)
        (modules / "source").symlink_to(common if common.is_dir() else resolved)
    except OSError as exc:
        raise NetflowUnavailable(
            f"cannot link kernel headers {resolved} at {build} ({exc.strerror})"
        ) from None


def missing_tracepoints() -> list[str]:
    """The tracepoints the program needs that this kernel's tracefs does not show."""
    for root in TRACEFS:
        events = root / "events"
        if events.is_dir():
            return [name for name in TRACEPOINTS if not (events / name).is_dir()]
    return list(TRACEPOINTS)


class EbpfFlows:
    """The loaded program; `read()` each interval, `close()` once. `attachment` says how it is
    attached: `raw_tracepoint` where the kernel's BTF gives the socket's layout
    (lens/netflow/socklayout.py), else `tracepoint`, and `why_not_raw` why not."""

    name = "ebpf"

    def __init__(
        self,
        *,
        max_flows: int = 65536,
        max_closed: int = 65536,
        kernel_headers: str = "",
        btf: Path | None = None,
    ) -> None:
        """`kernel_headers`: headers to link for bcc where the kernel's build folder has none
        (the netflow image's Debian headers); `btf`: the kernel's BTF, if not at
        socklayout.VMLINUX."""
        layout: socklayout.SockLayout | None = None
        why_not_raw = ""
        try:
            layout = socklayout.read_layout(btf or socklayout.VMLINUX)
        except socklayout.LayoutError as exc:
            why_not_raw = str(exc)
        ensure_headers(
            MODULES / os.uname().release, Path(kernel_headers) if kernel_headers else None
        )
        bcc = import_bcc()
        flags = compile_flags(max_flows, max_closed)
        self._bpf: Any = None
        if layout is not None:
            self._bpf, why_not_raw = load_raw(bcc, flags + layout.cflags())
        if self._bpf is None:
            # No layout, or the raw program refused (a verifier or a kernel of its own).
            require_tracepoints(why_not_raw)
            try:
                self._bpf = bcc.BPF(text=PROGRAM.read_bytes(), cflags=flags)
            except Exception as exc:  # bcc raises bare Exceptions for compile and load failures
                raise NetflowUnavailable(_why_not_loaded(exc)) from None
        self.attachment = "tracepoint" if why_not_raw else "raw_tracepoint"
        self.why_not_raw = why_not_raw
        self._flows = self._bpf[b"flows"]
        self._closed = self._bpf[b"closed"]
        self._ended = self._bpf[b"ended"]
        self._reads = self._bpf[b"reads"]
        self._reads_begun = 0
        self._barrier = membarrier.Barrier()
        self._dropped = self._bpf[b"dropped"]

    def read(self) -> sockets.Reading:
        """The live sockets' counters, then the sockets that ended since the last read: those
        that may have been read before (taken out of `closed`) and the sums of those never read
        (`ended`). The count of reads begun is raised first, and only sockets born before it are
        read, so that the end of each is handed over whole (bpf/flows.c `reads`)."""
        live = []
        self._reads_begun += 1
        self._reads[self._reads.Key(0)] = self._reads.Leaf(self._reads_begun)
        # The count raised for every CPU before the walk's first lookup (the kernel's side of
        # it: bpf/flows.c lens_destroyed).
        self._barrier.full()
        # A walk of a hash map starts over from its first key when the key it stood on is
        # deleted meanwhile (a socket destroyed): the keys already walked come again.
        for key in _unique(self._flows.keys()):
            try:
                value = self._flows[key]
            except KeyError:
                continue  # ended meanwhile: in `closed`, or summed in `ended` if born since
            if int(value.born) < self._reads_begun:  # born since: the next read's, or summed
                live.append(decode(int(key.value), value))
        closed = []
        for key, value in list(self._closed.items()):
            closed.append(decode(int(key.sk), value))
            with contextlib.suppress(KeyError):
                del self._closed[key]
        ended = [decode_ended(key, value) for key, value in self._ended.items()]
        return sockets.Reading(live=live, closed=closed, ended=ended)

    def dropped(self) -> sockets.Dropped:
        counts = [int(self._dropped[self._dropped.Key(index)].value) for index in (0, 1)]
        return sockets.Dropped(flows_full=counts[0], closed_full=counts[1])

    def close(self) -> None:
        self._bpf.cleanup()


def compile_flags(max_flows: int, max_closed: int) -> list[str]:
    """bpf/flows.c's map sizes, as bcc's cflags (text, which bcc encodes itself; the program
    and map names go as bytes: bcc warns of text)."""
    return [
        f"-DLENS_MAX_FLOWS={max_flows}",
        f"-DLENS_MAX_CLOSED={max_closed}",
        f"-DLENS_MAX_ENDED={max_closed}",
    ]


def _unique(keys: Iterable[Any]) -> list[Any]:
    """Keys of a map walk, each once, in the order first met."""
    walked: dict[int, Any] = {}
    for key in keys:
        walked.setdefault(int(key.value), key)
    return list(walked.values())


def decode(socket: int, value: Any) -> sockets.SocketCounters:
    """One map value (bcc's ctypes struct of `struct flow_t`) as counters."""
    rtt_count = int(value.rtt_count)
    local, remote = _endpoints(value)
    return sockets.SocketCounters(
        socket=socket,
        local=local,
        remote=remote,
        opened=sockets.parse_opened(int(value.opened)),
        sent=int(value.sent),
        received=int(value.received),
        segments_in=int(value.segments_in),
        rtt_sum_us=int(value.rtt_sum_us),
        rtt_count=rtt_count,
        rtt_min_us=int(value.rtt_min_us) if rtt_count else None,
        rtt_max_us=int(value.rtt_max_us) if rtt_count else None,
        retransmits=int(value.retransmits),
        closed=bool(value.closed),
    )


def require_tracepoints(why_not_raw: str) -> None:
    """NetflowUnavailable naming the ordinary tracepoints tracefs lacks, and why raw ones
    cannot be had either."""
    missing = missing_tracepoints()
    if missing:
        raise NetflowUnavailable(
            "tracepoints missing (or tracefs not mounted at /sys/kernel/tracing): "
            + ", ".join(missing)
            + f"; and no raw tracepoints: {why_not_raw}"
        )


def load_raw(bcc: ModuleType, cflags: list[str]) -> tuple[Any, str]:
    """The program built for raw tracepoints and attached to each, or None and why not: one
    refused is one too many, and the ones attached before it are detached."""
    try:
        bpf = bcc.BPF(text=PROGRAM.read_bytes(), cflags=cflags)
    except Exception as exc:  # bcc raises bare Exceptions for compile and load failures
        if _not_permitted(exc):
            raise NetflowUnavailable(_why_not_loaded(exc)) from None
        return None, _why_not_loaded(exc)
    try:
        for event in socklayout.RAW_TRACEPOINTS:
            bpf.attach_raw_tracepoint(
                tp=event.encode(), fn_name=RAW_FUNCTION.format(event).encode()
            )
    except Exception as exc:  # as above: a verifier's refusal, a tracepoint missing
        bpf.cleanup()
        if _not_permitted(exc):
            raise NetflowUnavailable(_why_not_loaded(exc)) from None
        return None, f"raw tracepoint not attached: {_first_line(exc)}"
    return bpf, ""


def _not_permitted(exc: Exception) -> bool:
    text = str(exc)
    return "Operation not permitted" in text or "EPERM" in text


def _first_line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0][:200] if text.strip() else type(exc).__name__


def _why_not_loaded(exc: Exception) -> str:
    if _not_permitted(exc):
        return "not permitted to load BPF programs: run as root or with CAP_BPF and CAP_PERFMON"
    return f"the BPF program did not load: {_first_line(exc)}"


def decode_ended(key: Any, per_cpu: Any) -> sockets.EndedCounters:
    """One entry of `ended`: bcc's ctypes struct of `struct ended_key_t`, and its `ended_t` on
    every CPU, summed."""

    def total(field: str) -> int:
        return sum(int(getattr(value, field)) for value in per_cpu)

    local, remote = _endpoints(key)
    return sockets.EndedCounters(
        local=local,
        remote=remote,
        opened=sockets.parse_opened(int(key.opened)),
        sent=total("sent"),
        received=total("received"),
        segments_in=total("segments_in"),
        rtt_sum_us=total("rtt_sum_us"),
        rtt_count=total("rtt_count"),
        retransmits=total("retransmits"),
        sockets=total("sockets"),
    )


def _endpoints(record: Any) -> tuple[sockets.Endpoint, sockets.Endpoint]:
    """The local and remote endpoint of a `flow_t` or an `ended_key_t`."""
    family = int(record.family)
    return (
        sockets.Endpoint(
            address=sockets.parse_address(family, bytes(record.local_addr)),
            port=int(record.local_port),
        ),
        sockets.Endpoint(
            address=sockets.parse_address(family, bytes(record.remote_addr)),
            port=int(record.remote_port),
        ),
    )
