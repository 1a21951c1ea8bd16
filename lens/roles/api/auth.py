"""Bearer tokens of `lens api`: a file of SHA-256 digests (api.token_file), re-read when it
changes (runtime/tokenfile.py), optionally Kubernetes TokenReview (api.token_review), and the
ASGI middleware that answers 401 without a good token and 403 to a user not let in.

The file holds digests, not tokens, so reading it (or a backup of it) gives no access. Nothing
here logs or exports a token, a digest or a line of the file.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import logging
import string
import threading
from collections.abc import Callable

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from lens.kube.machinery.tokenreviews import Review
from lens.roles.api import envelope
from lens.roles.api.schemas import base as schemas
from lens.runtime import errors, tokenfile

log = logging.getLogger(__name__)

_PREFIX = "sha256:"
_HEX = frozenset(string.hexdigits.lower())


def parse_digests(text: str) -> tuple[tuple[bytes, ...], list[int]]:
    """The digests of a token file's text and the numbers of its lines that are none.

    A line is a SHA-256 hex digest (`sha256sum`'s first column), optionally `sha256:`-prefixed;
    blank lines and lines starting with `#` are skipped."""
    digests, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        entry = entry.split()[0].lower().removeprefix(_PREFIX)
        if len(entry) == 64 and set(entry) <= _HEX:
            digests.append(bytes.fromhex(entry))
        else:
            bad.append(number)
    return tuple(digests), bad


class TokenDigests:
    """The digests of the accepted tokens, from a file re-read when it changed."""

    def __init__(self, path: str) -> None:
        self._file = tokenfile.TokenFile(path)
        self._path = path
        self._lock = threading.Lock()
        self._text: str | None = None
        self._digests: tuple[bytes, ...] = ()
        self.bad_lines: list[int] = []  # of the file as last read

    def digests(self) -> tuple[bytes, ...]:
        """The accepted digests now (SourceError: the file cannot be read)."""
        text = self._file.read()
        with self._lock:
            if text != self._text:
                self._digests, self.bad_lines = parse_digests(text)
                self._text = text
                if self.bad_lines:  # numbers only: a line may be a token pasted by mistake
                    log.error("token file lines ignored", extra={"lines": self.bad_lines[:20]})
                log.info("token file read", extra={"tokens": len(self._digests)})
            return self._digests

    def accepts(self, token: str) -> bool:
        """Whether `token` is one of the file's (compared with every digest, in constant time
        per digest, so the time taken tells nothing of which matched)."""
        presented = hashlib.sha256(token.encode()).digest()
        matched = False
        for digest in self.digests():
            matched |= hmac.compare_digest(presented, digest)
        return matched


def configured(path: str, *, key: str) -> TokenDigests:
    """The digests of the file `key` names, read now: unreadable, or without a single digest,
    is a ConfigError on `key`."""
    digests = TokenDigests(path)
    try:
        found = digests.digests()
    except errors.SourceError as exc:
        expected = f"a readable file ({exc})"
        raise errors.ConfigError(source="config", key=key, expected=expected) from exc
    bad = digests.bad_lines
    if bad or not found:
        where = f"lines {bad[:20]} are not" if bad else "no line is"
        raise errors.ConfigError(
            source="config",
            key=key,
            expected=f"a file of SHA-256 hex digests, one per line ({path}: {where} one)",
        )
    return digests


def bearer_token(scope: Scope) -> str | None:
    """The token of the request's `Authorization: Bearer` header, or None."""
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


class Verdict(enum.Enum):
    ACCEPTED = "accepted"
    UNKNOWN = "unknown"  # no token, or one nobody vouches for: 401
    FORBIDDEN = "forbidden"  # a known user outside the allowed groups: 403


class Authenticator:
    """Who may read the API: tokens of the token file (operators' own), else, when enabled,
    whoever the API server's TokenReview vouches for, in one of `allowed_groups` if any are
    given."""

    def __init__(
        self,
        *,
        digests: TokenDigests | None = None,
        reviews: Callable[[str], Review] | None = None,
        allowed_groups: tuple[str, ...] = (),
    ) -> None:
        self._digests = digests
        self._reviews = reviews
        self._allowed = frozenset(allowed_groups)

    @property
    def asks_kubernetes(self) -> bool:
        """Whether a check may wait on the API server (then it runs off the event loop)."""
        return self._reviews is not None

    def check(self, token: str | None) -> Verdict:
        """The verdict on a request's token (SourceError: the token file or the API server
        cannot be read, so nothing can be said)."""
        if token is None:
            return Verdict.UNKNOWN
        if self._digests is not None and self._digests.accepts(token):
            return Verdict.ACCEPTED
        if self._reviews is None:
            return Verdict.UNKNOWN
        review = self._reviews(token)
        if not review.authenticated:
            return Verdict.UNKNOWN
        if self._allowed and not self._allowed.intersection(review.groups):
            return Verdict.FORBIDDEN
        return Verdict.ACCEPTED


class RequireToken:
    """ASGI middleware: a request without a token the authenticator accepts is answered 401
    (403 for a user it knows but does not let in); `open_path` names paths served to anyone."""

    def __init__(
        self, app: ASGIApp, *, authenticator: Authenticator, open_path: Callable[[str], bool]
    ) -> None:
        self._app = app
        self._authenticator = authenticator
        self._open_path = open_path
        self._unreadable = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._open_path(str(scope.get("path", ""))):
            await self._app(scope, receive, send)
            return
        token = bearer_token(scope)
        check = self._authenticator.check
        try:
            if self._authenticator.asks_kubernetes:
                verdict = await anyio.to_thread.run_sync(check, token)
            else:
                verdict = check(token)
        except errors.SourceError as exc:
            self._note_unreadable(exc)
            response = envelope.error_response(
                503, "tokens cannot be checked now", code=schemas.REMOTE_SERVICE_ERROR
            )
            await response(scope, receive, send)
            return
        self._note_unreadable(None)
        if verdict is Verdict.ACCEPTED:
            await self._app(scope, receive, send)
            return
        if verdict is Verdict.FORBIDDEN:
            await envelope.error_response(403, "this user may not read the API")(
                scope, receive, send
            )
            return
        response = envelope.error_response(401, "a valid bearer token is required")
        response.headers["WWW-Authenticate"] = "Bearer"
        await response(scope, receive, send)

    def _note_unreadable(self, exc: errors.SourceError | None) -> None:
        """Log tokens becoming impossible to check, and possible again, once each."""
        if (exc is not None) == self._unreadable:
            return
        self._unreadable = exc is not None
        if exc is not None:
            log.error("tokens cannot be checked: every request refused", extra={"error": str(exc)})
        else:
            log.info("tokens can be checked again")
