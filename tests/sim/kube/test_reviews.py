"""The emulator's TokenReview: known tokens are their users, others are refused, nothing kept."""

from __future__ import annotations

import pytest

from lens.sim.kube.reviews import TokenReviews, User
from lens.sim.kube.status import ApiError


def _review(token: str, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token, **spec},
    }


def test_a_review_answers_the_user() -> None:
    reviews = TokenReviews()
    reviews.add("t1", User("bob", ("team-a", "system:authenticated")))
    answer = reviews.review(_review("t1"))
    assert answer["status"] == {
        "authenticated": True,
        "user": {"username": "bob", "groups": ["team-a", "system:authenticated"]},
        "audiences": [],
    }
    assert answer["spec"] == {"token": "t1"}  # the API server echoes the spec it was given
    assert reviews.review(_review("t2"))["status"] == {
        "authenticated": False,
        "error": "invalid bearer token",
    }
    assert reviews.reviewed == 2


def test_audiences_must_meet() -> None:
    reviews = TokenReviews()
    reviews.add("t1", User("bob", audiences=("lens", "api")))
    assert reviews.review(_review("t1", audiences=["api"]))["status"]["authenticated"]  # type: ignore[index]
    assert not reviews.review(_review("t1", audiences=["x"]))["status"]["authenticated"]  # type: ignore[index]


@pytest.mark.parametrize("body", [{}, {"spec": []}, {"spec": {}}, {"spec": {"token": ""}}])
def test_a_review_without_a_token_is_a_bad_request(body: dict[str, object]) -> None:
    with pytest.raises(ApiError) as refused:
        TokenReviews().review(body)
    assert refused.value.code == 400
