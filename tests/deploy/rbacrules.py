"""Kubernetes RBAC, evaluated as the API server's RBAC authorizer does, over rendered manifests:
which rules a ServiceAccount is granted (through RoleBindings and ClusterRoleBindings) and
whether they allow a request (verb, API group, resource, subresource, namespace, name).

The matching follows kubernetes.io/docs/reference/access-authn-authz/rbac: `*` matches every
verb, group or resource, `*/SUB` a subresource of any resource, `RES/SUB` that subresource only;
resourceNames, when given, must name the object (so a create or a list never matches them); a
Role or a RoleBinding grants in its namespace only, a ClusterRoleBinding everywhere. Every
authenticated user also holds the default discovery rules (system:discovery,
system:public-info-viewer).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lens.sim.kube.recording import ApiRequest

Document = Mapping[str, Any]

# The non-resource URLs of system:discovery and system:public-info-viewer, bound by default to
# every authenticated user (GET only).
DISCOVERY_URLS = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One PolicyRule of a Role or ClusterRole, with where it comes from."""

    owner: str  # "ClusterRole/NAME" or "Role/NAMESPACE/NAME"
    index: int  # its place among the owner's rules
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def atoms(self) -> list[tuple[str, str, str]]:
        """Each (API group, resource, verb) the rule grants."""
        return [(g, r, v) for g in self.api_groups for r in self.resources for v in self.verbs]

    def matches(self, request: ApiRequest) -> bool:
        if not _any(self.verbs, request.verb):
            return False
        if not request.resource_request:
            return any(_url_matches(url, request.path) for url in self.non_resource_urls)
        return (
            _any(self.api_groups, request.api_group)
            and _resource_matches(self.resources, request.resource, request.subresource)
            and (not self.resource_names or request.name in self.resource_names)
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """A rule held by a subject: everywhere (`namespace` None) or in one namespace."""

    rule: Rule
    namespace: str | None
    binding: str

    def allows(self, request: ApiRequest) -> bool:
        if self.namespace is not None and request.namespace != self.namespace:
            return False  # also refuses cluster-scoped and all-namespaces requests
        return self.rule.matches(request)


def _any(allowed: Sequence[str], value: str) -> bool:
    return "*" in allowed or value in allowed


def _url_matches(rule_url: str, path: str) -> bool:
    if rule_url == "*" or rule_url == path:
        return True
    return rule_url.endswith("*") and path.startswith(rule_url[:-1])


def _resource_matches(resources: Sequence[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for granted in resources:
        if granted in ("*", combined):
            return True
        if subresource and granted == f"*/{subresource}":
            return True
    return False


def _strings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, got {value!r}")
    return tuple(value)


def _rules(owner: str, document: Document) -> list[Rule]:
    rules = []
    for index, rule in enumerate(document.get("rules") or []):
        rules.append(
            Rule(
                owner=owner,
                index=index,
                verbs=_strings(rule.get("verbs")),
                api_groups=_strings(rule.get("apiGroups")),
                resources=_strings(rule.get("resources")),
                resource_names=_strings(rule.get("resourceNames")),
                non_resource_urls=_strings(rule.get("nonResourceURLs")),
            )
        )
    return rules


DEFAULT_RULES = (
    Rule(
        owner="ClusterRole/system:discovery",
        index=0,
        verbs=("get",),
        non_resource_urls=DISCOVERY_URLS,
    ),
)


class Rbac:
    """The roles and bindings of a set of rendered manifests."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.roles: dict[str, list[Rule]] = {}
        self._bindings: list[Document] = []
        for document in documents:
            kind = document.get("kind")
            meta = document.get("metadata") or {}
            if kind == "ClusterRole":
                owner = f"ClusterRole/{meta['name']}"
                self.roles[owner] = _rules(owner, document)
            elif kind == "Role":
                owner = f"Role/{meta['namespace']}/{meta['name']}"
                self.roles[owner] = _rules(owner, document)
            elif kind in ("RoleBinding", "ClusterRoleBinding"):
                self._bindings.append(document)

    def grants(self, namespace: str, name: str) -> list[Grant]:
        """Every rule the ServiceAccount `namespace`/`name` holds, the defaults included."""
        held = [Grant(rule=r, namespace=None, binding="default") for r in DEFAULT_RULES]
        for binding in self._bindings:
            if not any(_is_subject(s, namespace, name) for s in binding.get("subjects") or []):
                continue
            meta = binding.get("metadata") or {}
            where = meta.get("namespace") if binding["kind"] == "RoleBinding" else None
            ref = binding["roleRef"]
            owner = (
                f"ClusterRole/{ref['name']}"
                if ref["kind"] == "ClusterRole"
                else f"Role/{where}/{ref['name']}"
            )
            label = f"{binding['kind']}/{meta.get('name')}"
            held.extend(
                Grant(rule=rule, namespace=where, binding=label)
                for rule in self.roles.get(owner, [])
            )
        return held


def _is_subject(subject: Mapping[str, Any], namespace: str, name: str) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return subject.get("name") == name and subject.get("namespace") == namespace
    if kind == "User":
        return subject.get("name") == f"system:serviceaccount:{namespace}:{name}"
    if kind == "Group":
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")
        return subject.get("name") in (*groups, "system:authenticated")
    return False


def allowing(grants: Sequence[Grant], request: ApiRequest) -> list[Grant]:
    """The grants that allow `request` (none: RBAC refuses it)."""
    return [grant for grant in grants if grant.allows(request)]


def atom_of(request: ApiRequest) -> tuple[str, str, str]:
    resource = request.resource
    if request.subresource:
        resource = f"{resource}/{request.subresource}"
    return (request.api_group, resource, request.verb)
