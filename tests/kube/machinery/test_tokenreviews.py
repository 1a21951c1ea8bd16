"""TokenReview asked of the API emulator through the real Kubernetes client."""

from __future__ import annotations

import logging

import kubernetes
import pytest

from lens.kube.machinery import tokenreviews
from lens.kube.machinery.tokenreviews import Review
from lens.runtime import errors
from lens.sim.kube.reviews import User
from lens.sim.kube.server import KubeApiServer


def test_a_known_token_is_its_user_and_groups(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.token_reviews.add("sa-token", User("system:serviceaccount:lens:viewer", ("ops",)))
    assert tokenreviews.review(api_client, "sa-token") == Review(
        authenticated=True, username="system:serviceaccount:lens:viewer", groups=("ops",)
    )
    assert tokenreviews.review(api_client, "made-up") == Review(
        authenticated=False, error="invalid bearer token"
    )
    assert apiserver.token_reviews.reviewed == 2


def test_audiences_are_asked_for(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.token_reviews.add("for-lens", User("alice", audiences=("lens",)))
    assert tokenreviews.review(api_client, "for-lens", audiences=("lens",)).authenticated
    other = tokenreviews.review(api_client, "for-lens", audiences=("vault",))
    assert not other.authenticated and other.error == "token audiences is invalid"


def test_an_api_server_that_fails_is_a_source_error_without_the_token(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    apiserver.faults.fail_requests(500, method="POST", path_contains="tokenreviews")
    caplog.set_level(logging.DEBUG)
    with pytest.raises(errors.SourceError) as failed:
        tokenreviews.review(api_client, "the-secret-token")
    assert str(failed.value).startswith("token review failed: 500")
    assert "the-secret-token" not in str(failed.value)
    assert all("the-secret-token" not in r.getMessage() for r in caplog.records)


def test_a_status_naming_none_of_the_audiences_asked_is_refused() -> None:
    # An API server may authenticate a token for its own audience only, naming no other.
    user = kubernetes.client.V1UserInfo(username="alice")
    status = kubernetes.client.V1TokenReviewStatus(authenticated=True, user=user, audiences=[])
    assert tokenreviews.parse_status(status) == Review(authenticated=True, username="alice")
    refused = tokenreviews.parse_status(status, audiences=("lens",))
    assert not refused.authenticated
    named = kubernetes.client.V1TokenReviewStatus(
        authenticated=True, user=user, audiences=["vault", "lens"]
    )
    assert tokenreviews.parse_status(named, audiences=("lens",)).authenticated


def test_a_status_without_a_user_authenticates_as_nobody() -> None:
    assert tokenreviews.parse_status(None) == Review(authenticated=False)
    status = kubernetes.client.V1TokenReviewStatus(authenticated=True, user=None)
    assert tokenreviews.parse_status(status) == Review(authenticated=True)
