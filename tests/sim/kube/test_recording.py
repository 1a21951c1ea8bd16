"""Requests recorded as Kubernetes authorizes them: the attributes of known paths (as the API
server's RequestInfoFactory derives them), the record of requests the official client makes,
and a test's authorizer answering 403."""

from __future__ import annotations

import kubernetes
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.client.exceptions import ApiException

from lens.sim.kube.recording import ApiRequest, parse_request
from lens.sim.kube.server import KubeApiServer

from .conftest import pod


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        (
            "GET",
            "/api/v1/pods",
            "limit=500",
            ApiRequest(verb="list", api_version="v1", resource="pods", path="/api/v1/pods"),
        ),
        (
            "GET",
            "/api/v1/nodes",
            "watch=true&resourceVersion=7",
            ApiRequest(verb="watch", api_version="v1", resource="nodes", path="/api/v1/nodes"),
        ),
        (
            "GET",
            "/api/v1/namespaces/ml/pods/p-0",
            "",
            ApiRequest(
                verb="get",
                api_version="v1",
                resource="pods",
                namespace="ml",
                name="p-0",
                path="/api/v1/namespaces/ml/pods/p-0",
            ),
        ),
        (
            "PATCH",
            "/apis/batch/v1/namespaces/ml/jobs/train/status",
            "",
            ApiRequest(
                verb="patch",
                api_group="batch",
                api_version="v1",
                resource="jobs",
                subresource="status",
                namespace="ml",
                name="train",
                path="/apis/batch/v1/namespaces/ml/jobs/train/status",
            ),
        ),
        (
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/lens/leases",
            "",
            ApiRequest(
                verb="create",
                api_group="coordination.k8s.io",
                api_version="v1",
                resource="leases",
                namespace="lens",
                path="/apis/coordination.k8s.io/v1/namespaces/lens/leases",
            ),
        ),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/lens/leases/lens-jobs",
            "",
            ApiRequest(
                verb="update",
                api_group="coordination.k8s.io",
                api_version="v1",
                resource="leases",
                namespace="lens",
                name="lens-jobs",
                path="/apis/coordination.k8s.io/v1/namespaces/lens/leases/lens-jobs",
            ),
        ),
        (
            "DELETE",
            "/apis/discovery.k8s.io/v1/namespaces/lens/endpointslices",
            "labelSelector=a%3Db",
            ApiRequest(
                verb="deletecollection",
                api_group="discovery.k8s.io",
                api_version="v1",
                resource="endpointslices",
                namespace="lens",
                path="/apis/discovery.k8s.io/v1/namespaces/lens/endpointslices",
            ),
        ),
        (
            "DELETE",
            "/apis/discovery.k8s.io/v1/namespaces/lens/endpointslices/k-ipv4-0",
            "",
            ApiRequest(
                verb="delete",
                api_group="discovery.k8s.io",
                api_version="v1",
                resource="endpointslices",
                namespace="lens",
                name="k-ipv4-0",
                path="/apis/discovery.k8s.io/v1/namespaces/lens/endpointslices/k-ipv4-0",
            ),
        ),
        # A Namespace object is in its own namespace; its status is a subresource.
        (
            "GET",
            "/api/v1/namespaces/lens",
            "",
            ApiRequest(
                verb="get",
                api_version="v1",
                resource="namespaces",
                namespace="lens",
                name="lens",
                path="/api/v1/namespaces/lens",
            ),
        ),
        (
            "PUT",
            "/api/v1/namespaces/lens/finalize",
            "",
            ApiRequest(
                verb="update",
                api_version="v1",
                resource="namespaces",
                subresource="finalize",
                namespace="lens",
                name="lens",
                path="/api/v1/namespaces/lens/finalize",
            ),
        ),
        (
            "GET",
            "/api/v1/namespaces",
            "",
            ApiRequest(
                verb="list", api_version="v1", resource="namespaces", path="/api/v1/namespaces"
            ),
        ),
        # The deprecated watch path.
        (
            "GET",
            "/api/v1/watch/namespaces/ml/pods",
            "",
            ApiRequest(
                verb="watch",
                api_version="v1",
                resource="pods",
                namespace="ml",
                path="/api/v1/watch/namespaces/ml/pods",
            ),
        ),
        # A list of one object by name is authorized as naming it.
        (
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/lens/leases",
            "fieldSelector=metadata.name%3Dlens-controller&watch=1",
            ApiRequest(
                verb="watch",
                api_group="coordination.k8s.io",
                api_version="v1",
                resource="leases",
                namespace="lens",
                name="lens-controller",
                path="/apis/coordination.k8s.io/v1/namespaces/lens/leases",
            ),
        ),
        (
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "",
            ApiRequest(
                verb="create",
                api_group="authentication.k8s.io",
                api_version="v1",
                resource="tokenreviews",
                path="/apis/authentication.k8s.io/v1/tokenreviews",
            ),
        ),
    ],
)
def test_resource_requests_get_the_api_servers_attributes(
    method: str, path: str, query: str, expected: ApiRequest
) -> None:
    assert parse_request(method, path, query) == expected


@pytest.mark.parametrize(
    "path", ["/api", "/api/v1", "/apis", "/apis/batch", "/apis/batch/v1", "/version", "/healthz"]
)
def test_discovery_and_other_paths_are_non_resource_requests(path: str) -> None:
    assert parse_request("GET", path, "") == ApiRequest(
        verb="get", resource_request=False, path=path
    )


@pytest.mark.parametrize(
    ("query", "verb"),
    [
        ("watch=true", "watch"),
        ("watch=True", "watch"),
        ("watch=1", "watch"),
        ("watch=", "watch"),  # any value but 0 and false is true, an empty one too
        ("watch=0", "list"),
        ("watch=FALSE", "list"),
        ("watch=false&watch=true", "list"),  # the first value counts
        ("", "list"),
    ],
)
def test_a_watch_is_a_get_without_a_name_whose_watch_parameter_is_true(
    query: str, verb: str
) -> None:
    assert parse_request("GET", "/apis/apps/v1/deployments", query).verb == verb


def test_a_field_selector_other_than_one_name_names_nothing() -> None:
    for selector in ("metadata.name!=a", "spec.nodeName=n1", "metadata.name=a/b", ""):
        request = parse_request("GET", "/api/v1/pods", f"fieldSelector={selector}")
        assert (request.verb, request.name) == ("list", "")


@given(
    st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    st.lists(st.text(min_size=0, max_size=12), max_size=8),
    st.text(max_size=60),
)
def test_any_request_line_parses_to_attributes(method: str, parts: list[str], query: str) -> None:
    path = "/" + "/".join(parts)
    request = parse_request(method, path, query)
    assert request.path == path
    assert request.verb == request.verb.lower()
    assert request.resource_request == bool(request.resource)


def test_every_request_the_client_makes_is_recorded_until_cleared(
    kube: KubeApiServer, api: kubernetes.client.ApiClient, core: kubernetes.client.CoreV1Api
) -> None:
    core.create_namespace({"metadata": {"name": "ml"}})
    core.create_namespaced_pod("ml", pod("p-0", namespace="ml"))
    core.list_pod_for_all_namespaces()
    core.list_pod_for_all_namespaces()
    core.list_namespaced_pod("ml", watch=True, timeout_seconds=1, _preload_content=False).close()
    core.patch_namespaced_pod_status("p-0", "ml", {"status": {"phase": "Running"}})
    kubernetes.client.AuthenticationV1Api(api).create_token_review({"spec": {"token": "t"}})
    kubernetes.client.CoreApi(api).get_api_versions()
    seen = kube.recorded()
    summary = {(r.verb, r.api_group, r.resource, r.subresource, r.namespace, r.name) for r in seen}
    assert summary == {
        ("create", "", "namespaces", "", "", ""),
        ("create", "", "pods", "", "ml", ""),
        ("list", "", "pods", "", "", ""),
        ("watch", "", "pods", "", "ml", ""),
        ("patch", "", "pods", "status", "ml", "p-0"),
        ("create", "authentication.k8s.io", "tokenreviews", "", "", ""),
        ("get", "", "", "", "", ""),  # GET /api, a non-resource request
    }
    listed = parse_request("GET", "/api/v1/pods", "")
    assert seen[listed] == 2
    kube.clear_recorded()
    assert not kube.recorded()
    core.list_node()
    assert list(kube.recorded()) == [parse_request("GET", "/api/v1/nodes", "")]


def test_a_tests_authorizer_answers_what_it_refuses_with_403(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    kube.authorizer = lambda request: request.resource != "secrets"
    assert core.list_node().items == []
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_secret("db", "lens")
    assert caught.value.status == 403
    assert "get secrets 'db'" in caught.value.body
    denied = parse_request("GET", "/api/v1/namespaces/lens/secrets/db", "")
    assert kube.recorded()[denied] == 1, "a refused request is recorded too"
    kube.authorizer = None
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_secret("db", "lens")
    assert missing.value.status == 404
