"""Who a bearer token belongs to, asked of the API server (authentication.k8s.io/v1 TokenReview):
a ServiceAccount's token or a user's own kubectl token, without Lens keeping any secret.

A failed request is a SourceError saying status and reason only (apierrors.describe): the
token is in the request, never in what is logged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import kubernetes
import urllib3

from lens.kube.machinery import apierrors
from lens.runtime import errors

TIMEOUT_SECONDS = 5.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Review:
    """The API server's verdict on a token: whether it authenticates, and as whom."""

    authenticated: bool
    username: str = ""
    groups: tuple[str, ...] = ()
    error: str = ""  # why it does not authenticate, as the API server says


def parse_status(status: Any, *, audiences: tuple[str, ...] = ()) -> Review:
    """A Review from a TokenReview's `status` (the client's V1TokenReviewStatus or None). With
    `audiences` asked for, the token is good only if the status names one of them: an API server
    may authenticate a token for its own audience alone and say so by naming none."""
    if status is None or not getattr(status, "authenticated", False):
        error = getattr(status, "error", None) or ""
        return Review(authenticated=False, error=str(error))
    if audiences and not set(audiences) & set(getattr(status, "audiences", None) or ()):
        return Review(authenticated=False, error="the token is for none of the audiences asked")
    user = getattr(status, "user", None)
    username = str(getattr(user, "username", None) or "")
    groups = getattr(user, "groups", None) or []
    return Review(
        authenticated=True,
        username=username,
        groups=tuple(str(g) for g in groups if isinstance(g, str)),
    )


def review(
    api: kubernetes.client.ApiClient, token: str, *, audiences: tuple[str, ...] = ()
) -> Review:
    """The API server's review of `token` (SourceError when it cannot be asked)."""
    body = kubernetes.client.V1TokenReview(
        spec=kubernetes.client.V1TokenReviewSpec(token=token, audiences=list(audiences) or None)
    )
    try:
        answer = kubernetes.client.AuthenticationV1Api(api).create_token_review(
            body, _request_timeout=TIMEOUT_SECONDS
        )
    except (kubernetes.client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
        raise errors.SourceError(f"token review failed: {apierrors.describe(exc)}") from exc
    return parse_status(getattr(answer, "status", None), audiences=audiences)
