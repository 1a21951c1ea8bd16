"""The RBAC evaluator of tests/deploy/test_rbac.py against what Kubernetes documents
(kubernetes.io/docs/reference/access-authn-authz/rbac): scopes of Roles and bindings,
subresources, resourceNames, wildcards, non-resource URLs and the default discovery rules."""

from __future__ import annotations

from lens.sim.kube.recording import ApiRequest
from tests.deploy.rbacrules import Rbac, Rule, allowing
from tests.deploy.rendering import Document


def _binding(kind: str, name: str, role: tuple[str, str], namespace: str = "") -> Document:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "kind": kind,
        "metadata": meta,
        "roleRef": {"kind": role[0], "name": role[1]},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "lens"}],
    }


def _request(
    verb: str, resource: str, namespace: str = "", name: str = "", subresource: str = ""
) -> ApiRequest:
    return ApiRequest(
        verb=verb, resource=resource, namespace=namespace, name=name, subresource=subresource
    )


def test_the_evaluator_scopes_roles_and_bindings_as_kubernetes_does() -> None:
    pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}
    rbac = Rbac(
        [
            {"kind": "Role", "metadata": {"name": "r", "namespace": "lens"}, "rules": [pods]},
            {"kind": "ClusterRole", "metadata": {"name": "c"}, "rules": [pods]},
            _binding("RoleBinding", "rb", ("Role", "r"), "lens"),
            _binding("RoleBinding", "crb-in-ml", ("ClusterRole", "c"), "ml"),
        ]
    )
    grants = rbac.grants("lens", "sa")

    def allowed(request: ApiRequest) -> bool:
        return bool(allowing(grants, request))

    assert allowed(_request("get", "pods", "lens", "p"))
    assert allowed(_request("list", "pods", "ml")), "a ClusterRole bound in ml grants in ml"
    assert not allowed(_request("list", "pods", "kube-system"))
    assert not allowed(_request("list", "pods")), "all namespaces need a ClusterRoleBinding"
    assert not rbac.grants("lens", "other")[1:], "another ServiceAccount holds nothing"
    everywhere = Rbac(
        [
            {"kind": "ClusterRole", "metadata": {"name": "c"}, "rules": [pods]},
            _binding("ClusterRoleBinding", "crb", ("ClusterRole", "c")),
        ]
    ).grants("lens", "sa")
    assert allowing(everywhere, _request("list", "pods")) and allowing(
        everywhere, _request("get", "pods", "kube-system", "p")
    )


def _rule(
    verbs: tuple[str, ...],
    resources: tuple[str, ...] = (),
    *,
    groups: tuple[str, ...] = ("",),
    names: tuple[str, ...] = (),
    urls: tuple[str, ...] = (),
) -> Rule:
    return Rule(
        owner="ClusterRole/x",
        index=0,
        verbs=verbs,
        api_groups=groups,
        resources=resources,
        resource_names=names,
        non_resource_urls=urls,
    )


def test_the_evaluator_matches_subresources_names_and_wildcards() -> None:
    status = _request("patch", "pods", "ml", "p", subresource="status")
    assert not _rule(("patch",), ("pods",)).matches(status)
    assert _rule(("patch",), ("pods/status",)).matches(status)
    assert _rule(("patch",), ("*/status",)).matches(status)
    assert _rule(("*",), ("*",), groups=("*",)).matches(status)
    assert not _rule(("patch",), ("pods/status",), groups=("apps",)).matches(status)
    named = _rule(("get", "create", "list"), ("leases",), names=("a",))
    assert named.matches(_request("get", "leases", "lens", "a"))
    assert not named.matches(_request("get", "leases", "lens", "b"))
    assert not named.matches(_request("create", "leases", "lens")), "a create names nothing"
    assert not named.matches(_request("list", "leases", "lens"))
    discovery = ApiRequest(verb="get", resource_request=False, path="/apis/batch/v1")
    assert _rule(("get",), urls=("/apis/*",)).matches(discovery)
    assert not _rule(("get",), urls=("/apis",)).matches(discovery)
    default = Rbac([]).grants("lens", "anyone")
    assert allowing(default, discovery), "system:discovery holds for every authenticated user"
    assert not allowing(default, _request("list", "pods"))
