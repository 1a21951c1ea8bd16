"""RBAC per role, least privilege, proved on the rendered manifests: each role runs against API
emulators as its Deployment configures it, every feature that calls the API server exercised,
and every request it made is allowed by its ServiceAccount's rules in every overlay that
renders them; every rule is used by some request or says why in a `# why:` comment; nothing is
granted with a wildcard, and access in Lens's own namespace comes from Roles there."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml

from lens.roles.node_agent import main as node_agent_main
from lens.runtime.config import ControllerConfig, JobsConfig
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.recording import ApiRequest
from tests.deploy import (
    agentrun,
    apirun,
    controllerrun,
    jobsrun,
    netflowrun,
    rbacmanifests,
    rendering,
    tunerun,
)
from tests.deploy.rbacrules import Grant, Rbac, Rule, allowing, atom_of
from tests.deploy.rendering import Document
from tests.deploy.roleruns import Recorded, Requests, Settings, split

pytestmark = pytest.mark.slow_timeout

ACCOUNTS = {
    "controller": "lens-controller",
    "jobs": "lens-jobs",
    "api": "lens-api",
    "node-agent": "lens-node-agent",
    "tune": "lens-tune",
    "netflow": "lens-netflow",
}
# The Secret of a JuiceFS class lives in another namespace: jobs.yaml tells the operator to bind
# lens-jobs-storage-secrets there; these tests bind it as told.
STORAGE_SECRETS_ROLE = "lens-jobs-storage-secrets"
# The overlay applied in a cluster a central Lens watches: its controller and jobs reach that
# cluster as lens-controller there (the kubeconfig of the clusters Secret).
WATCHED_OVERLAY = "agents-only"


@dataclasses.dataclass(frozen=True, slots=True)
class Overlay:
    name: str
    documents: list[Document]
    namespace: str

    def rbac(self, *, documented: bool = True) -> Rbac:
        extra = [_storage_secrets_binding(self.namespace)] if documented else []
        return Rbac([*self.documents, *extra])

    def has(self, account: str) -> bool:
        return rbacmanifests.namespace_of(self.documents, account) is not None


def _storage_secrets_binding(namespace: str) -> Document:
    namespace_of_secret, _ = split(jobsrun.JUICEFS_SECRET)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "lens-jobs-juicefs", "namespace": namespace_of_secret},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": STORAGE_SECRETS_ROLE,
        },
        "subjects": [{"kind": "ServiceAccount", "name": "lens-jobs", "namespace": namespace}],
    }


@pytest.fixture(scope="module")
def overlays() -> list[Overlay]:
    found = rendering.overlays()
    assert found, "no overlay under deploy/kustomize/overlays"
    rendered = []
    for name, path in found.items():
        documents = rendering.render(path)
        namespaces = {rbacmanifests.namespace_of(documents, a) for a in ACCOUNTS.values()}
        namespaces.discard(None)
        assert len(namespaces) == 1, f"{name}: Lens's ServiceAccounts in {namespaces}"
        rendered.append(Overlay(name, documents, str(namespaces.pop())))
    return rendered


def _configured(overlays: list[Overlay], deployment: str, key: str) -> object:
    """The first value an overlay's Deployment gives a setting (None: no overlay sets it)."""
    for overlay in overlays:
        settings = rbacmanifests.deployment_settings(
            overlay.documents, deployment, overlay.namespace
        )
        if settings.get(key) not in (None, "", []):
            return settings[key]
    return None


@pytest.fixture(scope="module")
def settings(overlays: list[Overlay]) -> Settings:
    """The names the Deployments give the objects the roles use; a feature no overlay turns
    on is exercised with the name its RBAC rule expects."""
    namespaces = {o.namespace for o in overlays}
    assert len(namespaces) == 1, f"overlays in several namespaces {namespaces}: run each"
    ns = namespaces.pop()

    def setting(deployment: str, key: str, fallback: object) -> object:
        value = _configured(overlays, deployment, key)
        return fallback if value is None else value

    kinds = setting("lens-controller", "controller.finalizer_kinds", ("Job", "PyTorchJob"))
    return Settings(
        namespace=ns,
        controller_lease=str(
            setting("lens-controller", "controller.lease", ControllerConfig().lease)
        ),
        kubelet_service=str(
            setting("lens-controller", "controller.kubelet_service", f"{ns}/lens-kubelet")
        ),
        clusters_secret=str(
            setting("lens-controller", "controller.clusters_secret", f"{ns}/lens-clusters")
        ),
        finalizer_kinds=tuple(kinds) if isinstance(kinds, list | tuple) else (str(kinds),),
        jobs_lease=str(setting("lens-jobs", "jobs.lease", f"{ns}/lens-jobs")),
        storage_config_secret=str(
            setting("lens-jobs", "jobs.storage_config_secret", JobsConfig().storage_config_secret)
        ),
        multi_storage_config_secret=str(
            setting(
                "lens-jobs",
                "jobs.multi_storage_config_secret",
                f"{ns}/lens-multi-storage-config",
            )
        ),
    )


@pytest.fixture(scope="module")
def controller(
    overlays: list[Overlay], settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> controllerrun.ControllerRun:
    first = next(o for o in overlays if o.has("lens-controller"))
    grants = first.rbac().grants(first.namespace, "lens-controller")
    return controllerrun.run(
        settings,
        tmp_path_factory.mktemp("controller"),
        lambda request: bool(allowing(grants, request)),
    )


@pytest.fixture(scope="module")
def jobs(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return jobsrun.run(settings, tmp_path_factory.mktemp("jobs"))


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> apirun.ApiRun:
    return apirun.run(tmp_path_factory.mktemp("api"))


@pytest.fixture(scope="module")
def tune(tmp_path_factory: pytest.TempPathFactory) -> tunerun.TuneRun:
    return tunerun.run(tmp_path_factory.mktemp("tune"))


@pytest.fixture(scope="module")
def netflow(tmp_path_factory: pytest.TempPathFactory) -> netflowrun.NetflowRun:
    return netflowrun.run(tmp_path_factory.mktemp("netflow"))


def _moved(requests: Iterable[ApiRequest], source: str, target: str) -> list[ApiRequest]:
    """The requests as made in an installation whose namespace is `target`."""
    if source == target:
        return list(requests)
    return [
        dataclasses.replace(r, namespace=target) if r.namespace == source else r for r in requests
    ]


def _refused(
    overlay: Overlay, account: str, requests: Iterable[ApiRequest], **kw: bool
) -> list[str]:
    grants = overlay.rbac(**kw).grants(overlay.namespace, account)
    return sorted({r.describe() for r in requests if not allowing(grants, r)})


def _home_requests(
    role: str,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
) -> Requests:
    made = {
        "controller": controller.recorded.home,
        "jobs": jobs.home,
        "api": api.recorded.home,
        "tune": tune.recorded.home,
        "netflow": netflow.recorded.home,
    }
    return made[role]


# -- every request allowed ---------------------------------------------------------------


@pytest.mark.parametrize("role", ["controller", "jobs", "api", "tune", "netflow"])
def test_every_request_a_role_makes_is_allowed_by_its_rules_in_every_overlay(
    role: str,
    overlays: list[Overlay],
    settings: Settings,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
) -> None:
    requests = _home_requests(role, controller, jobs, api, tune, netflow)
    assert requests, f"{role} made no request"
    checked = [o for o in overlays if o.has(ACCOUNTS[role])]
    assert checked, f"no overlay renders {ACCOUNTS[role]}"
    for overlay in checked:
        moved = _moved(requests, settings.namespace, overlay.namespace)
        assert _refused(overlay, ACCOUNTS[role], moved) == [], overlay.name


def test_the_roles_did_what_the_requests_are_evidence_of(
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
) -> None:
    """Each feature ran (the requests are not those of a role that failed early)."""
    assert api.statuses == (200, 401), "a known token served, an unknown one refused"
    assert tune.numa_balancing == "0\n", "the Node's label selected the profile"
    assert {(r.resource, r.verb, r.name) for r in tune.recorded.home} == {
        ("nodes", "get", tunerun.NODE)
    }
    assert {(r.resource, r.verb, r.name) for r in netflow.recorded.home} >= {
        ("nodes", "list", ""),
        ("configmaps", "get", "kubeadm-config"),
    }
    verbs = {(r.resource, r.verb) for r in controller.recorded.home}
    assert {("leases", "update"), ("services", "update"), ("endpointslices", "delete")} <= verbs
    assert {("jobs", "patch"), ("pytorchjobs", "patch"), ("cronjobs", "watch")} <= verbs
    assert {(r.resource, r.verb) for r in controller.recorded.remote} >= {("jobs", "patch")}
    written = {(r.resource, r.verb, r.name) for r in jobs.home}
    assert {("secrets", "create", ""), ("leases", "update", "lens-jobs")} <= written


def test_the_juicefs_secret_is_read_only_where_an_operator_binds_it(
    overlays: list[Overlay], settings: Settings, jobs: Recorded
) -> None:
    """Unbound by default: without the RoleBinding jobs.yaml documents, the Secrets of other
    namespaces are the only requests refused (the scan then stores the class by its name)."""
    text = (rbacmanifests.RBAC_DIR / "jobs.yaml").read_text()
    assert f"--clusterrole={STORAGE_SECRETS_ROLE}" in text, "the binding is documented"
    secret_namespace, secret_name = split(jobsrun.JUICEFS_SECRET)
    expected = [
        ApiRequest(
            verb="get",
            api_version="v1",
            resource="secrets",
            namespace=secret_namespace,
            name=secret_name,
        ).describe()
    ]
    for overlay in (o for o in overlays if o.has("lens-jobs")):
        moved = _moved(jobs.home, settings.namespace, overlay.namespace)
        assert _refused(overlay, "lens-jobs", moved, documented=False) == expected, overlay.name


def test_a_watched_clusters_requests_are_allowed_to_lens_controller_there(
    overlays: list[Overlay],
    settings: Settings,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
) -> None:
    """A central Lens reaches a watched cluster with the kubeconfig of its clusters Secret:
    the controller's watches, finalizers and kubelet targets, the jobs' storage config read."""
    remote = [*controller.recorded.remote, *jobs.remote]
    assert remote
    for overlay in (o for o in overlays if o.has("lens-controller")):
        moved = _moved(remote, settings.namespace, overlay.namespace)
        assert _refused(overlay, "lens-controller", moved) == [], overlay.name


def test_the_watched_clusters_overlay_renders_the_identity_a_central_lens_uses(
    overlays: list[Overlay],
) -> None:
    watched = [o for o in overlays if o.name == WATCHED_OVERLAY]
    assert watched, f"no overlay {WATCHED_OVERLAY}"
    assert watched[0].has("lens-controller"), (
        f"{WATCHED_OVERLAY} drops lens-controller and its rules: the central Lens's kubeconfig "
        "for this cluster then has no least-privilege identity to hold"
    )


def test_release_finalizers_frees_every_lens_finalizer_under_the_controllers_rules(
    controller: controllerrun.ControllerRun,
) -> None:
    release = controller.release
    assert release.left == []
    assert {(r.kind, r.name) for r in release.released} >= {
        ("Job", "eval"),
        ("PyTorchJob", "llama"),
    }
    # It scans every kind the API serves: the lists RBAC refuses are skipped, nothing else is.
    assert all(r.verb == "list" and not r.namespace for r in release.refused), release.refused
    assert {r.resource for r in release.refused} >= {"secrets", "configmaps"}
    conflicts = {(r.resource, r.verb, r.name) for r in release.requests}
    assert {("jobs", "get", "eval"), ("pytorchjobs", "get", "llama")} <= conflicts


def test_the_node_agent_asks_only_its_kubelet_and_is_allowed_to(
    overlays: list[Overlay], mi300x: HostTree, tmp_path: Path
) -> None:
    assert "kube" not in node_agent_main.ROLE.sections, "no way to reach the API server"
    requests, metrics = agentrun.run(mi300x, tmp_path)
    assert set(requests) == {("GET", "/pods"), ("GET", "/stats/summary")}
    assert 'lens_kube_node_gpu_requested{resource="amd.com/gpu"} 2.0' in metrics
    assert 'lens_kube_node_fs_used_bytes{fs="root"}' in metrics
    checked = [o for o in overlays if o.has("lens-node-agent")]
    assert checked
    for overlay in checked:
        grants = overlay.rbac().grants(overlay.namespace, "lens-node-agent")
        for method, path in requests:
            alternatives = agentrun.kubelet_attributes(method, path, agentrun.NODE)
            # A kubelet with fine-grained authorization asks for the first, an older one for
            # the last: both must be allowed.
            for attributes in {alternatives[0], alternatives[-1]}:
                assert allowing(grants, attributes), f"{overlay.name}: {attributes.describe()}"


# -- every rule used or justified, nothing broader than needed ------------------------------


def _all_requests(
    settings: Settings,
    overlay: Overlay,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
    kubelet: Iterable[ApiRequest],
) -> dict[str, list[ApiRequest]]:
    """Every recorded request by the ServiceAccount that makes it in `overlay`."""
    allowed_release = [
        r for r in controller.release.requests if r not in controller.release.refused
    ]
    made = {
        "lens-controller": [
            *controller.recorded.home,
            *allowed_release,
            *controller.recorded.remote,
            *jobs.remote,
        ],
        "lens-jobs": list(jobs.home),
        "lens-api": list(api.recorded.home),
        "lens-node-agent": list(kubelet),
        "lens-tune": list(tune.recorded.home),
        "lens-netflow": list(netflow.recorded.home),
    }
    return {a: _moved(r, settings.namespace, overlay.namespace) for a, r in made.items()}


def _kubelet_requests() -> list[ApiRequest]:
    """What the node agent's requests are authorized as (test_the_node_agent_... ran them)."""
    found = []
    for path in ("/pods", "/stats/summary"):
        found.extend(agentrun.kubelet_attributes("GET", path, agentrun.NODE))
    return found


def _unused(
    grants: list[Grant], requests: list[ApiRequest]
) -> dict[Rule, set[tuple[str, str, str]]]:
    used: dict[Rule, set[tuple[str, str, str]]] = collections.defaultdict(set)
    for request in requests:
        for grant in allowing(grants, request):
            used[grant.rule].add(atom_of(request))
    return {
        g.rule: set(g.rule.atoms()) - used[g.rule]
        for g in grants
        if g.binding != "default" and set(g.rule.atoms()) - used[g.rule]
    }


def _source_of(rule: Rule) -> tuple[str, str, int]:
    kind, _, rest = rule.owner.partition("/")
    return (kind, rest.rsplit("/", 1)[-1], rule.index)


def test_every_rule_is_used_by_a_recorded_request_or_says_why(
    overlays: list[Overlay],
    settings: Settings,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
) -> None:
    sources = rbacmanifests.source_rules()
    problems = []
    for overlay in overlays:
        rbac = overlay.rbac()
        made = _all_requests(
            settings, overlay, controller, jobs, api, tune, netflow, _kubelet_requests()
        )
        for account, requests in made.items():
            if not overlay.has(account):
                continue
            for rule, atoms in _unused(rbac.grants(overlay.namespace, account), requests).items():
                source = sources.get(_source_of(rule))
                if source is None:
                    problems.append(f"{overlay.name}: {rule.owner} rule {rule.index} is not Lens's")
                elif not source.why:
                    unused = ", ".join(sorted("/".join(a) for a in atoms))
                    problems.append(f"{source.where}: unused ({unused}) and no '# why:'")
    assert problems == []


def test_rendered_rules_are_the_files_rules_and_explicit(overlays: list[Overlay]) -> None:
    sources = rbacmanifests.source_rules()
    for overlay in overlays:
        for account in ACCOUNTS.values():
            for grant in overlay.rbac().grants(overlay.namespace, account)[1:]:
                source = sources.get(_source_of(grant.rule))
                assert source is not None, f"{grant.rule.owner}: not from base/rbac"
                rendered = next(
                    d["rules"][grant.rule.index]
                    for d in overlay.documents
                    if d.get("kind") == source.kind and d["metadata"]["name"] == source.name
                )
                assert rendered == source.rule, f"{source.where}: changed by {overlay.name}"
                wildcard = {*grant.rule.verbs, *grant.rule.api_groups, *grant.rule.resources}
                assert "*" not in wildcard, f"{source.where}: a wildcard"


def test_lens_namespace_access_comes_from_roles_and_cluster_rules_reach_beyond_it(
    overlays: list[Overlay],
    settings: Settings,
    controller: controllerrun.ControllerRun,
    jobs: Recorded,
    api: apirun.ApiRun,
    tune: tunerun.TuneRun,
    netflow: netflowrun.NetflowRun,
) -> None:
    """A Role where namespaced access suffices; a cluster-wide rule only for what lies
    outside Lens's namespace (cluster-scoped objects, all namespaces, workloads' namespaces)."""
    for overlay in overlays:
        rbac = overlay.rbac()
        made = _all_requests(
            settings, overlay, controller, jobs, api, tune, netflow, _kubelet_requests()
        )
        for account, requests in made.items():
            if not overlay.has(account):
                continue
            grants = rbac.grants(overlay.namespace, account)
            for request in requests:
                allowed = allowing(grants, request)
                if request.namespace == overlay.namespace:
                    assert any(g.namespace for g in allowed), request.describe()
            cluster_wide = {g.rule for g in grants if g.namespace is None}
            outside = [r for r in requests if r.namespace != overlay.namespace]
            for rule in cluster_wide:
                if rule.owner.startswith("ClusterRole/system:"):
                    continue
                used_outside = any(rule.matches(r) for r in outside)
                used_inside = any(rule.matches(r) for r in requests if r not in outside)
                assert used_outside or not used_inside, f"{rule.owner} {rule.index}: use a Role"


def test_every_object_of_a_roles_file_carries_its_component_label() -> None:
    """The overlays drop a role's RBAC with its workload by this label."""
    components = {"controller.yaml": "controller", "jobs.yaml": "jobs", "api.yaml": "api"}
    components["node-agent.yaml"] = "node-agent"
    for file_name, component in components.items():
        documents = list(yaml.safe_load_all((rbacmanifests.RBAC_DIR / file_name).read_text()))
        assert documents
        for document in documents:
            labels = document["metadata"].get("labels") or {}
            assert labels.get("app.kubernetes.io/component") == component, file_name
            assert "namespace" not in document["metadata"], "kustomize sets the namespace"
            for subject in document.get("subjects") or []:
                assert "namespace" not in subject, "kustomize sets the namespace"
