"""The one error tree of Lens; boundary modules translate third-party errors into it.

LensError
├── ConfigError                 bad config file, environment or flags (exit code 2)
├── SourceError                 a device, file or tool did not answer as expected
│   ├── NoDataError             not applicable on this host (debug log only)
│   └── DeviceUnavailableError
├── KubeError
│   ├── NotFound
│   ├── Conflict
│   ├── Gone
│   └── Forbidden
├── StoreError                  the database refused or could not be reached
├── TemporaryError              retried with backoff after `delay` seconds
├── PermanentError              logged, counted and dropped
└── FatalError                  stops the role with a non-zero exit
    └── ListenError             a server cannot listen on its address (one line, exit code 1)
"""

from __future__ import annotations

# Process exit codes of every lens command and role.
EXIT_OK = 0
EXIT_FATAL = 1
EXIT_CONFIG = 2
EXIT_STOP_TIMEOUT = 3
EXIT_SIGNAL_TWICE = 130


class LensError(Exception):
    """Root of every error Lens raises on purpose."""


class ConfigError(LensError):
    """A config value is unknown, of the wrong type or impossible.

    `source` names where the value came from (a file path or an environment variable),
    `key` is the dotted key path and `expected` says what would have been accepted.
    """

    def __init__(self, *, source: str, key: str, expected: str) -> None:
        self.source = source
        self.key = key
        self.expected = expected
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {expected}")


class SourceError(LensError):
    """A data source (sysfs file, tool, socket) failed or answered malformed data."""


class NoDataError(SourceError):
    """The source does not apply to this host (no such device or driver)."""


class DeviceUnavailableError(SourceError):
    """The device exists but cannot be read right now."""


class KubeError(LensError):
    """The Kubernetes API answered with an error."""


class NotFound(KubeError):
    """The object does not exist (HTTP 404)."""


class Conflict(KubeError):
    """The write lost a race on resourceVersion (HTTP 409)."""


class Gone(KubeError):
    """The watch resourceVersion is older than the server's history (HTTP 410)."""


class Forbidden(KubeError):
    """RBAC denies the request (HTTP 403)."""


class StoreError(LensError):
    """The database refused a statement or could not be reached."""


class TemporaryError(LensError):
    """Worth retrying after `delay` seconds."""

    def __init__(self, message: str, *, delay: float = 1.0) -> None:
        super().__init__(message)
        self.delay = delay


class PermanentError(LensError):
    """Retrying cannot help: log it, count it and drop the unit of work."""


class FatalError(LensError):
    """The role cannot go on; the service stops with a non-zero exit code."""


class ListenError(FatalError):
    """A server cannot listen on `host`:`port`: the port is taken, the address is not this
    host's, or binding it is not permitted.

    `purpose` says what was to listen there ("the REST API"), `reason` why it cannot, and `key`
    names the setting that moves it ("api.port") and `env` its environment variable, so the one
    line a person reads says what to change.
    """

    def __init__(
        self, *, host: str, port: int, purpose: str, reason: str, key: str, env: str
    ) -> None:
        self.host = host
        self.port = port
        self.purpose = purpose
        self.reason = reason
        self.key = key
        self.env = env
        super().__init__(self.describe())

    @property
    def address(self) -> str:
        """host:port, an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def describe(self, flag: str = "") -> str:
        """The message, naming the command-line `flag` that moves it too when there is one."""
        what = "port" if self.key.endswith("port") else "address"
        ways = (
            f"{flag}, the {self.key} setting or {self.env}"
            if flag
            else (f"the {self.key} setting or {self.env}")
        )
        return (
            f"cannot listen on {self.address} for {self.purpose}: {self.reason}; "
            f"choose another {what} with {ways}"
        )


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none), for logs
    and one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
