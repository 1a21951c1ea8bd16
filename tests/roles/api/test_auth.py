"""Bearer tokens: digests read from a file and re-read on change, or Kubernetes TokenReview;
401 without a good token, 403 for a user outside the allowed groups; no token, digest or line
of the file in any log line."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import kubernetes
import peewee
import pytest

from lens.kube.machinery import tokenreviews
from lens.roles.api import auth
from lens.roles.api.reviewcache import ReviewCache
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.sim.kube.reviews import User
from lens.sim.kube.server import KubeApiServer
from tests.roles.api.conftest import data, error, make_client

TOKEN = "s3cret-token-one"
OTHER = "s3cret-token-two"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_file(path: Path, *tokens: str) -> Path:
    lines = ["# tokens of the dashboards", "", *(_digest(t) for t in tokens)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_parse_digests_skips_comments_and_numbers_bad_lines() -> None:
    text = f"# c\n\n{_digest(TOKEN)}  dashboard\nsha256:{_digest(OTHER).upper()}\n{TOKEN}\n"
    digests, bad = auth.parse_digests(text)
    assert digests == (
        hashlib.sha256(TOKEN.encode()).digest(),
        hashlib.sha256(OTHER.encode()).digest(),
    )
    assert bad == [5]


def test_a_token_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    path = _token_file(tmp_path / "tokens", TOKEN)
    digests = auth.configured(str(path), key="api.token_file")
    assert digests.accepts(TOKEN) and not digests.accepts(OTHER)
    _token_file(path, OTHER)
    os.utime(path, ns=(1, 1))  # a new mtime even within the file system's time resolution
    assert digests.accepts(OTHER) and not digests.accepts(TOKEN)


@pytest.mark.parametrize("content", ["", "# only a comment\n", "not-a-digest\n"])
def test_a_token_file_without_digests_is_a_config_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "tokens"
    path.write_text(content)
    with pytest.raises(errors.ConfigError) as caught:
        auth.configured(str(path), key="api.token_file")
    assert caught.value.key == "api.token_file"
    assert "not-a-digest" not in str(caught.value)


def test_an_unreadable_token_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        auth.configured(str(tmp_path / "absent"), key="api.token_file")
    assert caught.value.key == "api.token_file"


def test_bearer_token_of_a_scope() -> None:
    def scope(*headers: tuple[bytes, bytes]) -> dict[str, object]:
        return {"type": "http", "headers": list(headers)}

    assert auth.bearer_token(scope((b"authorization", b"Bearer abc "))) == "abc"
    assert auth.bearer_token(scope((b"authorization", b"bearer abc"))) == "abc"
    assert auth.bearer_token(scope((b"authorization", b"Basic abc"))) is None
    assert auth.bearer_token(scope((b"authorization", b"Bearer "))) is None
    assert auth.bearer_token(scope()) is None


def test_requests_need_a_good_token(
    sqlite_db: peewee.Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _token_file(tmp_path / "tokens", TOKEN)
    client = make_client(
        sqlite_db,
        tokens=auth.Authenticator(digests=auth.configured(str(path), key="api.token_file")),
    )
    caplog.set_level(logging.DEBUG)
    for headers in ({}, {"Authorization": f"Bearer {OTHER}"}, {"Authorization": TOKEN}):
        response = client.get("/v1/nodes", headers=headers)
        assert error(response, 401) == "a valid bearer token is required"
        assert response.headers["WWW-Authenticate"] == "Bearer"
    assert error(client.get("/no/such/path"), 401)  # no hint of which paths exist
    # The schema, the docs page and its assets hold nothing of the cluster.
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/docs").status_code == 200
    assert client.get("/docs/", follow_redirects=False).status_code == 307
    good = {"Authorization": f"Bearer {TOKEN}"}
    listed = data(client.get("/v1/nodes", headers=good))
    assert isinstance(listed, dict) and (listed["data"], listed["total"]) == ([], 0)
    logged = "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    for secret in (TOKEN, OTHER, _digest(TOKEN), _digest(OTHER)):
        assert secret not in logged


def test_a_token_file_that_became_unreadable_refuses_every_request(
    sqlite_db: peewee.Database, tmp_path: Path
) -> None:
    path = _token_file(tmp_path / "tokens", TOKEN)
    client = make_client(
        sqlite_db,
        tokens=auth.Authenticator(digests=auth.configured(str(path), key="api.token_file")),
    )
    path.unlink()
    response = client.get("/v1/nodes", headers={"Authorization": f"Bearer {TOKEN}"})
    assert error(response, 503, code=8001) == "tokens cannot be checked now"


def _reviewing(apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient) -> ReviewCache:
    apiserver.token_reviews.add("sa-ops", User("system:serviceaccount:lens:ops", ("ops",)))
    apiserver.token_reviews.add("user-dev", User("dev@example.com", ("developers",)))
    return ReviewCache(
        lambda token: tokenreviews.review(api_client, token),
        seconds=60,
        monotonic=FakeClock().monotonic,
    )


def test_a_token_the_api_server_vouches_for_is_let_in(
    sqlite_db: peewee.Database,
    tmp_path: Path,
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
) -> None:
    reviews = _reviewing(apiserver, api_client)
    file_tokens = auth.configured(str(_token_file(tmp_path / "tokens", TOKEN)), key="k")
    client = make_client(
        sqlite_db,
        tokens=auth.Authenticator(
            digests=file_tokens, reviews=reviews.review, allowed_groups=("ops",)
        ),
    )
    for token in ("sa-ops", TOKEN):  # a ServiceAccount's; the token file's, never reviewed
        for _ in range(3):
            got = client.get("/v1/nodes", headers={"Authorization": f"Bearer {token}"})
            listed = data(got)
            assert isinstance(listed, dict) and (listed["data"], listed["total"]) == ([], 0)
    assert apiserver.token_reviews.reviewed == 1  # one review, then its verdict is kept
    developer = client.get("/v1/nodes", headers={"Authorization": "Bearer user-dev"})
    assert error(developer, 403) == "this user may not read the API"
    unknown = client.get("/v1/nodes", headers={"Authorization": "Bearer forged"})
    assert error(unknown, 401) == "a valid bearer token is required"


def test_without_allowed_groups_any_reviewed_user_reads(
    sqlite_db: peewee.Database, apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    reviews = _reviewing(apiserver, api_client)
    client = make_client(sqlite_db, tokens=auth.Authenticator(reviews=reviews.review))
    got = client.get("/v1/nodes", headers={"Authorization": "Bearer user-dev"})
    assert got.status_code == 200


def test_an_api_server_that_cannot_review_is_a_503(
    sqlite_db: peewee.Database,
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reviews = _reviewing(apiserver, api_client)
    client = make_client(sqlite_db, tokens=auth.Authenticator(reviews=reviews.review))
    apiserver.faults.fail_requests(503, method="POST", path_contains="tokenreviews")
    caplog.set_level(logging.DEBUG)
    refused = client.get("/v1/nodes", headers={"Authorization": "Bearer sa-ops"})
    assert error(refused, 503, code=8001) == "tokens cannot be checked now"
    assert client.get("/v1/nodes", headers={"Authorization": "Bearer sa-ops"}).status_code == 200
    assert all("sa-ops" not in f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
