# syntax=docker/dockerfile:1
#
# Lens: one image for every role. The role is the container's arguments (`args: [node-agent]`,
# `[jobs]`, `[api]`, `[controller]`): the entrypoint is the `lens` command.
#
#   docker build -t lens .                             # every role but netflow (non-root)
#   docker build -t lens-netflow --target netflow .    # `lens netflow`: bcc, runs as root
#
# The context is the repository root; .dockerignore lets in only what the wheel is built from.
# Our CI machines have no registry access, so this file is not built there:
# tests/deploy/test_image.py checks it instead (COPY sources in the context, base images pinned
# by tag, the non-root user, the entrypoint being the console script pyproject.toml declares).

# --- builder: a wheel of Lens, installed with its dependencies into a virtualenv -------------
FROM python:3.11-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
# pyproject.toml names README.md as the package's readme: the wheel is not built without it.
COPY pyproject.toml README.md ./
COPY lens/ lens/
# A wheel, not the source tree: the image holds no sources, build tools or editable install.
# The virtualenv has no pip of its own (the builder's installs into it): nothing in the runtime
# image can install packages.
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv --without-pip /opt/lens \
 && python -m pip --python /opt/lens/bin/python install /wheels/lens-*.whl \
 && /opt/lens/bin/lens --help >/dev/null

# --- base: the slim runtime with the virtualenv; what both targets share ----------------------
FROM python:3.11-slim-bookworm AS base
# The same base image as the builder: the virtualenv's interpreter links stay valid.
COPY --from=builder /opt/lens /opt/lens
# 65532, the uid distroless images call "nonroot": unprivileged, and owning no host files.
RUN groupadd --system --gid 65532 lens \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin lens \
 && install -d -o 65532 -g 65532 -m 0750 /var/lib/lens
# A read-only root file system works: bytecode was compiled at install and is never written
# again, HOME and TMPDIR are /tmp (an emptyDir), and the embedded data (SQLite for `lens up`,
# the agent's event journal, daily reports) lives in the /var/lib/lens volume.
ENV PATH=/opt/lens/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    LENS_SERVICE__DATA_DIR=/var/lib/lens
VOLUME ["/var/lib/lens"]
WORKDIR /var/lib/lens
LABEL org.opencontainers.image.title="lens" \
      org.opencontainers.image.description="GPU-cluster observability for Kubernetes AI/ML clusters" \
      org.opencontainers.image.licenses="Apache-2.0"
# server.port (/metrics, /healthz, /readyz, the agent's REST and the jobs' intake), the jobs'
# gRPC event server, the API.
EXPOSE 8989 8991 8080
# No CMD: a container started without a role prints the usage and exits 2.
ENTRYPOINT ["lens"]

# --- netflow: `lens netflow` with bcc ---------------------------------------------------------
FROM base AS netflow
# bcc from Debian's python3-bpfcc (never PyPI's unrelated package named bcc). Its module is pure
# Python over libbcc through ctypes, for Debian's Python 3.11: the same minor version as this
# image's interpreter, so the virtualenv imports it through a link. The kernel headers are
# Debian's nearest ones: bcc compiles its programs against headers at start, the nodes' kernels
# often have none packaged, and programs reading only tracepoint arguments (as lens netflow's
# do) work with near headers. A node's own headers, mounted read-only from the host
# (/lib/modules and /usr/src), are better. /usr/src/lens-kernel-headers names the image's for
# netflow.kernel_headers: Lens links them where bcc compiles (docs/netflow.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        python3-bpfcc "linux-headers-$(dpkg --print-architecture)" \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/lib/python3/dist-packages/bcc /opt/lens/lib/python3.11/site-packages/bcc \
 && ln -s "$(ls -d /usr/src/linux-headers-*-"$(dpkg --print-architecture)" | sort -V | tail -n 1)" \
        /usr/src/lens-kernel-headers \
 && /opt/lens/bin/python -c "import bcc"
# Root, deliberately: loading BPF programs needs CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN on
# kernels before 5.8), and Kubernetes grants added capabilities only to a root process (a
# non-root one loses them at exec). The DaemonSet runs it as root with every other capability
# dropped, a read-only root file system and the host's network namespace.
USER 0:0

# --- runtime (the default target): every other role, as an unprivileged user ----------------
FROM base AS runtime
USER 65532:65532
