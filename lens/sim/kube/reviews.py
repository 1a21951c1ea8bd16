"""TokenReview for the API emulator: tokens a test registers, each a user with groups, reviewed
as the API server's authenticator would (authentication.k8s.io/v1, create-only, never stored).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from lens.sim.kube.status import bad_request

JsonObject = dict[str, Any]
PATH = "/apis/authentication.k8s.io/v1/tokenreviews"


@dataclasses.dataclass(frozen=True, slots=True)
class User:
    username: str
    groups: tuple[str, ...] = ()
    audiences: tuple[str, ...] = ()  # the token's; empty: the API server's own


class TokenReviews:
    """The tokens the emulator knows and the reviews it has answered."""

    def __init__(self) -> None:
        self._users: dict[str, User] = {}
        self._lock = threading.Lock()
        self.reviewed = 0

    def add(self, token: str, user: User) -> None:
        with self._lock:
            self._users[token] = user

    def review(self, body: JsonObject) -> JsonObject:
        """The TokenReview `body` with its status filled in (400 for a body without a token)."""
        spec = body.get("spec") if isinstance(body, dict) else None
        if not isinstance(spec, dict):
            raise bad_request("spec: Required value")
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise bad_request("spec.token: Required value")
        wanted = spec.get("audiences") or []
        with self._lock:
            self.reviewed += 1
            user = self._users.get(token)
        status: JsonObject
        if user is None:
            status = {"authenticated": False, "error": "invalid bearer token"}
        elif wanted and not set(wanted) & set(user.audiences):
            status = {"authenticated": False, "error": "token audiences is invalid"}
        else:
            status = {
                "authenticated": True,
                "user": {"username": user.username, "groups": list(user.groups)},
                "audiences": list(wanted) or list(user.audiences),
            }
        return {
            "kind": "TokenReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": spec,  # as the API server does, the token included
            "status": status,
        }
