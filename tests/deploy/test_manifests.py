"""The Kubernetes manifests (deploy/kustomize), checked without a cluster (issue 22, point 6):
every overlay renders with `kubectl kustomize`; every object validates against the Kubernetes
OpenAPI schemas of a pinned version (kubernetes-validate; the Prometheus Operator's monitors
against tests/deploy/monitors.py); every container's arguments parse with the `lens` command and
the config its ConfigMap and environment give loads with Lens's own loader, every file it names
where the pod mounts it; and the rendered objects apply to the API emulator with kubectl.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

import lens
from lens.netflow import loader as netflow_loader
from lens.runtime import errors, settings
from lens.runtime.config import Config
from lens.sim.kube.server import KubeApiServer
from lens.tune import places
from lens.tune import rules as tune_rules
from tests.deploy import monitors
from tests.deploy.commandline import Refused, parse
from tests.deploy.podfiles import SECRET_SAMPLES, SERVICE_ACCOUNT_DIR, Container, PodFiles
from tests.deploy.podfiles import containers as containers_of
from tests.deploy.rendering import KUSTOMIZE, ROOT, overlays, render

Document = dict[str, Any]

# The oldest Kubernetes the manifests are for (kubectl 1.27 is the first with kustomize 5, which
# renders them), and a recent one: each object must be valid in both.
KUBERNETES_VERSIONS = ("1.27", "1.34")
NAMESPACE = "lens"  # the overlays' namespace
EXPECTED_ROLES = {
    "single-cluster": {"node-agent", "tune", "netflow", "controller", "jobs", "api"},
    "control-plane": {"controller", "jobs", "api"},
    "agents-only": {"node-agent", "tune", "netflow"},
}
OVERLAYS = sorted(EXPECTED_ROLES)
# The ServiceAccounts (and so the RBAC) each overlay brings: a cluster reporting to a central
# Lens keeps the controller's, the identity the central controller watches it with.
EXPECTED_ACCOUNTS = {
    **EXPECTED_ROLES,
    "agents-only": {"node-agent", "tune", "netflow", "controller"},
}
# Kinds the API emulator (lens/sim/kube) does not serve: checked against the schemas only.
NOT_SERVED = {
    "ServiceAccount",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "PodDisruptionBudget",
    "NetworkPolicy",
}
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace"}
# The path settings each role reads (a key, or every path key of a section: "telemetry."), and
# those no pod reads (kube.kubeconfig: the pods use their service account; daily_report_dir:
# relative to service.data_dir).
ROLE_PATHS = {
    "node-agent": ("host.", "kubelet.", "containers.", "events."),
    "controller": ("database.password_file", "kube.token_file", "kube.ca_file"),
    "jobs": (
        "database.password_file",
        "service.data_dir",
        "jobs.tls_cert_file",
        "jobs.tls_key_file",
        "jobs.token_file",
        "kube.token_file",
        "kube.ca_file",
        "telemetry.",
    ),
    "api": ("database.password_file", "api.token_file", "kube.token_file", "kube.ca_file"),
    "tune": ("host.root", "tune.policy_file", "kube.token_file", "kube.ca_file"),
    "netflow": ("netflow.policy_file", "netflow.kernel_headers", "kube.token_file", "kube.ca_file"),
}
NO_POD_PATHS = ("kube.kubeconfig", "jobs.daily_report_dir")
# Settings naming a NAMESPACE/NAME object in Lens's own namespace, by the role reading them.
NAMESPACED_SETTINGS = {
    "node-agent": (),
    "controller": ("controller.lease", "controller.kubelet_service", "controller.clusters_secret"),
    "jobs": (
        "jobs.lease",
        "jobs.storage_config_secret",
        "jobs.multi_storage_config_secret",
        "controller.clusters_secret",
    ),
    "api": (),
    "tune": (),
    "netflow": (),
}
# Paths the image itself holds (the Dockerfile makes them; tests/deploy/test_image.py).
IMAGE_PATHS = ("/usr/src/lens-kernel-headers",)
# PERFORMANCE.md, `lens node-agent` on 8 GPUs + 8 RDMA ports: the highest peak RSS measured.
AGENT_PEAK_RSS_MIB = 56


@functools.cache
def rendered(overlay: str) -> tuple[Document, ...]:
    return tuple(render(overlays()[overlay]))


def _kinds(documents: tuple[Document, ...], kind: str) -> list[Document]:
    return [d for d in documents if d["kind"] == kind]


def _component(document: Mapping[str, Any]) -> str:
    return str(document["metadata"]["labels"]["app.kubernetes.io/component"])


def _workloads(documents: tuple[Document, ...]) -> list[Document]:
    return [d for d in documents if d["kind"] in ("Deployment", "DaemonSet")]


def _mib(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[: -len(suffix)]) * factor
    return float(quantity) / 2**20


def _cores(quantity: str) -> float:
    return float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def test_kubectl_has_kustomize_5() -> None:
    shown = subprocess.run(
        ["kubectl", "version", "--client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    version = json.loads(shown.stdout).get("kustomizeVersion", "v0")
    major = int(re.match(r"v(\d+)", version).group(1))  # type: ignore[union-attr]
    # Debian bookworm's kubernetes-client (kubectl 1.20) embeds kustomize 2.0.3, which takes no
    # directories in `resources` and no patch targets: kubectl 1.27 or later is needed.
    assert major >= 5, f"kubectl's kustomize is {version}; the overlays need v5 (kubectl 1.27+)"


def test_the_overlays_are_the_documented_ones() -> None:
    assert sorted(overlays()) == OVERLAYS
    guide = (ROOT / "docs" / "deploy.md").read_text()
    for overlay in OVERLAYS:
        assert f"overlays/{overlay}" in guide


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_overlay_renders_the_roles_it_is_for(overlay: str) -> None:
    documents = rendered(overlay)
    assert {_component(w) for w in _workloads(documents)} == EXPECTED_ROLES[overlay]
    accounts = {d["metadata"]["name"] for d in _kinds(documents, "ServiceAccount")}
    assert accounts == {f"lens-{role}" for role in EXPECTED_ACCOUNTS[overlay]}
    for binding in (*_kinds(documents, "RoleBinding"), *_kinds(documents, "ClusterRoleBinding")):
        assert {s["name"] for s in binding["subjects"]} <= accounts
    for workload in _workloads(documents):
        spec = workload["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == f"lens-{_component(workload)}"
    # Secrets are made by whoever installs (docs/deploy.md), never shipped in the manifests.
    assert not _kinds(documents, "Secret")
    for document in documents:
        expected = None if document["kind"] in CLUSTER_SCOPED else NAMESPACE
        assert document["metadata"].get("namespace") == expected, document["metadata"]
        assert document["metadata"]["labels"]["app.kubernetes.io/part-of"] == "lens"


def test_the_image_is_lens_at_its_version() -> None:
    images = {
        container.body["image"]
        for overlay in OVERLAYS
        for container in containers_of(rendered(overlay))
    }
    assert images == {f"lens:{lens.__version__}", f"lens-netflow:{lens.__version__}"}


# --- schemas -----------------------------------------------------------------------------------


def _validate(document: Document, version: str) -> None:
    if document["apiVersion"].startswith(f"{monitors.GROUP}/"):
        jsonschema.validate(document, monitors.SCHEMAS[document["kind"]])
    else:
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates_against_the_schemas(overlay: str, version: str) -> None:
    for document in rendered(overlay):
        try:
            _validate(document, version)
        except kubernetes_validate.SchemaNotFoundError as exc:
            pytest.fail(f"no schema: {exc.message}")
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as exc:
            where = ".".join(str(p) for p in exc.path)
            name = f"{document['kind']}/{document['metadata']['name']}"
            pytest.fail(f"{overlay}: {name}: {where}: {exc.message}")


def test_validation_refuses_a_misspelt_field() -> None:
    documents = rendered("single-cluster")
    agent = json.loads(json.dumps(_kinds(documents, "DaemonSet")[0]))
    container = agent["spec"]["template"]["spec"]["containers"][0]
    container["livenesProbe"] = container.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError, match="livenesProbe"):
        _validate(agent, KUBERNETES_VERSIONS[0])
    monitor = json.loads(json.dumps(_kinds(documents, "PodMonitor")[0]))
    monitor["spec"]["podMetricsEndpoints"][0]["interval"] = "15 seconds"
    with pytest.raises(jsonschema.ValidationError, match="15 seconds"):
        _validate(monitor, KUBERNETES_VERSIONS[0])
    monitor["spec"]["podMetricsEndpoints"][0] = {"port": "http", "pth": "/metrics"}
    with pytest.raises(jsonschema.ValidationError, match="pth"):
        _validate(monitor, KUBERNETES_VERSIONS[0])


# --- the command line and the config -----------------------------------------------------------


def _all_containers() -> Iterator[tuple[str, Container]]:
    for overlay in OVERLAYS:
        for container in containers_of(rendered(overlay)):
            yield overlay, container


CONTAINERS = [pytest.param(o, c, id=f"{o}:{c.label}") for o, c in _all_containers()]


@pytest.mark.parametrize(("overlay", "container"), CONTAINERS)
def test_every_container_runs_its_role_with_the_configmap(
    overlay: str, container: Container
) -> None:
    # No command: the image's entrypoint, `lens`, gets the arguments (tests/deploy/test_image.py).
    assert "command" not in container.body
    parsed = parse(container.body["args"])
    assert parsed.path == (_component(container.workload),)
    config_file = parsed.params["config"]
    mount = container.mount_of(config_file)
    assert mount is not None and mount.kind == "configMap" and mount.read_only, config_file
    data = container.config_map_data(mount.volume["configMap"]["name"])
    assert config_file.removeprefix(mount.path + "/") in data


def test_the_parser_refuses_what_lens_refuses() -> None:
    with pytest.raises(Refused, match="--grcp-port"):
        parse(["jobs", "--grcp-port", "8991"])
    with pytest.raises(Refused):
        parse(["api", "--api-port", "http"])
    assert parse(["controller", "release-finalizers"]).path == ("controller", "release-finalizers")


def _load(container: Container, root: Path) -> tuple[PodFiles, Config]:
    files = PodFiles(container, root)
    return files, files.load_config(parse(container.body["args"]).params["config"])


def _paths(role: str) -> list[str]:
    """The path settings `role` reads."""
    return [
        key
        for key in settings.leaf_keys(Config, paths_only=True)
        if any(key == p or (p.endswith(".") and key.startswith(p)) for p in ROLE_PATHS[role])
    ]


def _setting(cfg: Config, key: str) -> object:
    section, name = key.split(".")
    return getattr(getattr(cfg, section), name)


def test_every_path_setting_is_placed() -> None:
    placed = {key for role in ROLE_PATHS for key in _paths(role)} | set(NO_POD_PATHS)
    assert placed == set(settings.leaf_keys(Config, paths_only=True))


@pytest.mark.parametrize(("overlay", "container"), CONTAINERS)
def test_every_container_loads_its_config(
    overlay: str, container: Container, tmp_path: Path
) -> None:
    files, cfg = _load(container, tmp_path)
    environment = container.environment()
    for name, value in environment.items():
        assert "$(" not in value, f"{name}={value}: a reference to a variable defined later"
    role = _component(container.workload)
    for key in _paths(role):
        value = files.inside(str(_setting(cfg, key)))
        if value.startswith("/"):
            _check_path(container, files, key, value)
    for key in NAMESPACED_SETTINGS[role]:
        value = str(_setting(cfg, key))
        assert not value or value.startswith(f"{container.namespace}/"), (key, value)
    assert cfg.server.port == _port(container, "http")
    annotations = container.workload["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(cfg.server.port)


def _port(container: Container, name: str) -> int:
    ports = {p["name"]: p["containerPort"] for p in container.body["ports"]}
    return int(ports[name])


def _check_path(container: Container, files: PodFiles, key: str, path: str) -> None:
    """A path setting lies where the pod has it: a file of a mounted Secret or ConfigMap (or the
    service account's token), the host's file system, or a volume the role may write to."""
    if path.startswith(SERVICE_ACCOUNT_DIR + "/"):
        assert container.spec.get("automountServiceAccountToken", True), key
        return
    if path in IMAGE_PATHS:
        assert container.body["image"].startswith("lens-netflow:"), (container.label, key)
        return
    mount = container.mount_of(path)
    assert mount is not None, f"{container.label}: {key} = {path} is in no volume"
    if mount.kind in ("secret", "configMap"):
        assert files.at(path).is_file(), f"{container.label}: {key} = {path} is not mounted"
    elif key in ("service.data_dir", "events.journal_dir"):
        assert not mount.read_only, f"{container.label}: {key} = {path} is read-only"
    else:
        assert mount.kind == "hostPath", f"{container.label}: {key} = {path}"


def test_the_loader_refuses_an_unknown_key(tmp_path: Path) -> None:
    container = next(c for c in containers_of(rendered("single-cluster")) if "jobs" in c.label)
    body = json.loads(json.dumps(container.body))
    body["env"].append({"name": "LENS_JOBS__GRCP_PORT", "value": "8991"})
    changed = Container(
        workload=container.workload, spec=container.spec, body=body, documents=container.documents
    )
    with pytest.raises(errors.ConfigError, match=r"jobs\.grcp_port: unknown key"):
        _load(changed, tmp_path)


def _container(overlay: str, role: str) -> Container:
    return next(c for c in containers_of(rendered(overlay)) if _component(c.workload) == role)


def test_the_agents_reach_the_jobs_they_are_meant_to(tmp_path: Path) -> None:
    _, agent = _load(_container("single-cluster", "node-agent"), tmp_path / "single")
    service = next(
        s
        for s in _kinds(rendered("single-cluster"), "Service")
        if s["metadata"]["name"] == "lens-jobs"
    )
    grpc = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "grpc")
    assert agent.events.server_address == f"lens-jobs.{NAMESPACE}.svc:{grpc}"
    assert agent.events.token_file and not agent.events.tls
    _, jobs = _load(_container("single-cluster", "jobs"), tmp_path / "jobs")
    assert jobs.jobs.grpc_port == grpc and jobs.jobs.token_file
    _, remote = _load(_container("agents-only", "node-agent"), tmp_path / "remote")
    assert remote.events.server_address == SECRET_SAMPLES[("lens-central", "address")]
    assert remote.events.tls and remote.events.ca_file and remote.events.token_file
    _, central = _load(_container("control-plane", "jobs"), tmp_path / "central")
    assert central.jobs.tls_cert_file and central.jobs.tls_key_file
    _, watcher = _load(_container("control-plane", "controller"), tmp_path / "watcher")
    assert watcher.controller.clusters_secret == f"{NAMESPACE}/lens-clusters"


def test_the_api_asks_for_tokens_beyond_loopback(tmp_path: Path) -> None:
    _, cfg = _load(_container("single-cluster", "api"), tmp_path)
    assert cfg.api.host == "0.0.0.0"
    assert cfg.api.token_file or cfg.api.token_review


@pytest.mark.parametrize("overlay", ["single-cluster", "control-plane"])
def test_replicas_elect_a_leader(overlay: str, tmp_path: Path) -> None:
    documents = rendered(overlay)
    budgets = {_component(p): p["spec"] for p in _kinds(documents, "PodDisruptionBudget")}
    for deployment in _kinds(documents, "Deployment"):
        role = _component(deployment)
        assert deployment["spec"]["replicas"] >= 2, role
        assert budgets[role] == {"maxUnavailable": 1, "selector": deployment["spec"]["selector"]}
    _, controller = _load(_container(overlay, "controller"), tmp_path / "controller")
    assert controller.controller.leader_election and controller.controller.lease
    _, jobs = _load(_container(overlay, "jobs"), tmp_path / "jobs")
    assert jobs.jobs.lease  # several replicas: the periodic jobs run on one


# --- what the pods may do, and what they get ---------------------------------------------------


def test_the_deployments_run_unprivileged() -> None:
    for overlay in OVERLAYS:
        for container in containers_of(rendered(overlay)):
            if container.workload["kind"] != "Deployment":
                continue
            pod = container.spec["securityContext"]
            assert pod["runAsNonRoot"] and pod["runAsUser"] != 0, container.label
            assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
            own = container.body["securityContext"]
            assert own["readOnlyRootFilesystem"] and not own["allowPrivilegeEscalation"]
            assert own["capabilities"] == {"drop": ["ALL"]}
            assert not container.spec.get("hostPID") and not container.spec.get("hostNetwork")
            assert not any(m.kind == "hostPath" for m in container.mounts()), container.label


@pytest.mark.parametrize("overlay", ["single-cluster", "agents-only"])
def test_the_node_agent_mounts_only_the_host_paths_it_reads(overlay: str, tmp_path: Path) -> None:
    container = _container(overlay, "node-agent")
    files, cfg = _load(container, tmp_path)
    root, journal = files.inside(cfg.host.root), files.inside(cfg.events.journal_dir)
    host = {m.volume["hostPath"]["path"]: m for m in container.mounts() if m.kind == "hostPath"}
    # docs/node-agent.md: the host's / read-only at host.root; docs/events.md: the journal.
    assert set(host) == {"/", journal}
    assert host["/"].path == root and host["/"].read_only
    assert host[journal].path == journal and not host[journal].read_only
    mounts = {m["mountPath"]: m for m in container.body["volumeMounts"]}
    assert mounts[root]["mountPropagation"] == "HostToContainer"
    for socket in (cfg.containers.containerd_address, cfg.containers.pod_resources_socket):
        assert files.inside(socket).startswith(root + "/")
    assert container.spec["hostPID"] and not container.spec.get("hostNetwork")
    assert container.body["securityContext"]["readOnlyRootFilesystem"]
    affinity = container.spec["affinity"]["nodeAffinity"]
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    keys = {e["key"] for term in terms for e in term["matchExpressions"]}
    assert set(Config().controller.gpu_model_labels) <= keys  # the GPU model labels
    assert {"operator": "Exists"} in container.spec["tolerations"]


@pytest.mark.parametrize("overlay", ["single-cluster", "agents-only"])
def test_the_tuning_daemon_writes_only_where_lens_puts_its_files(
    overlay: str, tmp_path: Path
) -> None:
    container = _container(overlay, "tune")
    files, cfg = _load(container, tmp_path)
    root = Path(files.inside(cfg.host.root))
    host = {m.volume["hostPath"]["path"]: m for m in container.mounts() if m.kind == "hostPath"}
    assert host["/"].path == str(root) and host["/"].read_only
    writable = {m.path for m in host.values() if not m.read_only}
    # Every file Lens writes (docs/tune.md) lies under a writable mount, and nothing else is
    # writable: the drop-ins, the record, and /proc/sys for live values.
    written = [
        places.sysctl_files(root).own,
        places.systemd_files(root).own,
        places.limits_files(root).own,
        root / places.UNIT_DIRS[-1] / f"{places.CONTAINERD_UNIT}.d" / places.OWN_NAME,
        root / cfg.tune.record_file,
        tune_rules.sysctl_path(root, "vm.max_map_count"),
    ]
    holders = {next(w for w in writable if str(path).startswith(w + "/")) for path in written}
    assert holders == writable
    assert {host[p].path for p in host if p != "/"} == {
        str(root / p.lstrip("/")) for p in host if p != "/"
    }  # each host folder at its own place under the host root
    assert container.spec["hostNetwork"], "net.* sysctls are the host network namespace's"
    assert container.spec["hostIPC"], "kernel.shm* and the like are the host IPC namespace's"
    assert container.body["securityContext"]["readOnlyRootFilesystem"]
    policy_file = files.inside(cfg.tune.policy_file)
    policy = container.mount_of(policy_file)
    assert policy is not None and policy.kind == "configMap" and policy.read_only
    assert tune_rules.parse_policy(files.at(policy_file).read_text(), source=policy_file)
    assert cfg.tune.node_name, "its Node's labels select the profiles"


@pytest.mark.parametrize("overlay", ["single-cluster", "agents-only"])
def test_netflow_gets_the_capabilities_bpf_needs_and_nothing_more(
    overlay: str, tmp_path: Path
) -> None:
    container = _container(overlay, "netflow")
    files, cfg = _load(container, tmp_path)
    context = container.body["securityContext"]
    assert not context.get("privileged") and context["readOnlyRootFilesystem"]
    assert context["capabilities"] == {
        "drop": ["ALL"],
        "add": ["BPF", "PERFMON", "SYS_ADMIN", "SYS_RESOURCE"],
    }
    assert container.spec["hostNetwork"] and not container.spec.get("hostPID")
    host = {m.volume["hostPath"]["path"]: m for m in container.mounts() if m.kind == "hostPath"}
    assert set(host) == {"/sys/kernel/tracing"} and host["/sys/kernel/tracing"].read_only
    assert netflow_loader.TRACEFS[0] == Path("/sys/kernel/tracing")  # the one mounted
    modules = container.mount_of(str(netflow_loader.MODULES / "6.1.0" / "build"))
    assert modules is not None and modules.kind == "emptyDir" and not modules.read_only
    assert files.inside(cfg.netflow.kernel_headers) in IMAGE_PATHS


def test_every_container_has_requests_and_limits() -> None:
    for _, container in _all_containers():
        resources = container.body["resources"]
        for what in ("cpu", "memory"):
            request, limit = resources["requests"][what], resources["limits"][what]
            measure = _cores if what == "cpu" else _mib
            assert 0 < measure(request) <= measure(limit), (container.label, what)
    agent = _container("single-cluster", "node-agent").body["resources"]
    assert _mib(agent["requests"]["memory"]) >= AGENT_PEAK_RSS_MIB


def test_probes_ask_the_health_endpoints() -> None:
    for _, container in _all_containers():
        liveness, readiness = container.body["livenessProbe"], container.body["readinessProbe"]
        assert liveness["httpGet"] == {"path": "/healthz", "port": "http"}, container.label
        assert readiness["httpGet"] == {"path": "/readyz", "port": "http"}, container.label


def test_secrets_are_never_inline() -> None:
    for _, container in _all_containers():
        for variable in container.body.get("env") or []:
            name = variable["name"]
            secretive = re.search(r"PASSWORD|TOKEN|URL$|KEY", name) and not name.endswith(
                ("_FILE", "KUBELET__URL")
            )
            if secretive:
                assert "secretKeyRef" in variable.get("valueFrom", {}), (container.label, name)
    for overlay in OVERLAYS:
        for config_map in _kinds(rendered(overlay), "ConfigMap"):
            for text in config_map["data"].values():
                data = yaml.safe_load(text)
                assert not (data.get("database") or {}).get("password")
                assert "url" not in (data.get("database") or {})


# --- selectors, ports and who may reach what ---------------------------------------------------


def _matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector selects `labels`."""
    wanted = selector.get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        present = expression["key"] in labels
        value = labels.get(expression["key"])
        ok = {
            "In": present and value in expression.get("values", []),
            "NotIn": not present or value not in expression.get("values", []),
            "Exists": present,
            "DoesNotExist": not present,
        }[expression["operator"]]
        if not ok:
            return False
    return True


def _selected(documents: tuple[Document, ...], selector: Mapping[str, Any]) -> list[Container]:
    return [
        c
        for c in containers_of(documents)
        if _matches(selector, c.workload["spec"]["template"]["metadata"]["labels"])
    ]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_selectors_and_ports_meet_their_pods(overlay: str) -> None:
    documents = rendered(overlay)
    for workload in _workloads(documents):
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert _matches(workload["spec"]["selector"], labels)
    services = _kinds(documents, "Service")
    for service in services:
        pods = _selected(documents, {"matchLabels": service["spec"]["selector"]})
        assert pods, service["metadata"]["name"]
        for port in service["spec"]["ports"]:
            assert all(_port(pod, port["targetPort"]) for pod in pods)
    for monitor in _kinds(documents, "PodMonitor"):
        pods = _selected(documents, monitor["spec"]["selector"])
        assert pods, monitor["metadata"]["name"]
        for endpoint in monitor["spec"]["podMetricsEndpoints"]:
            assert all(_port(pod, endpoint["port"]) for pod in pods)
    for monitor in _kinds(documents, "ServiceMonitor"):
        matched = [
            s for s in services if _matches(monitor["spec"]["selector"], s["metadata"]["labels"])
        ]
        assert matched, monitor["metadata"]["name"]
        for endpoint in monitor["spec"]["endpoints"]:
            assert all(endpoint["port"] in {p["name"] for p in s["spec"]["ports"]} for s in matched)
    for budget in _kinds(documents, "PodDisruptionBudget"):
        assert _selected(documents, budget["spec"]["selector"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_pod_is_behind_a_network_policy(overlay: str) -> None:
    documents = rendered(overlay)
    policies = _kinds(documents, "NetworkPolicy")
    for container in containers_of(documents):
        labels = container.workload["spec"]["template"]["metadata"]["labels"]
        covering = [p for p in policies if _matches(p["spec"]["podSelector"], labels)]
        assert covering, container.label
        opened = {
            port["port"]
            for p in covering
            for rule in p["spec"]["ingress"]
            for port in rule["ports"]
        }
        # Every port the pod listens on is opened to someone, and nothing else is.
        assert opened == {int(p["containerPort"]) for p in container.body["ports"]}


def _ingress_to(documents: tuple[Document, ...], role: str, port: int) -> list[Mapping[str, Any]]:
    policy = next(p for p in _kinds(documents, "NetworkPolicy") if _component(p) == role)
    return [
        rule for rule in policy["spec"]["ingress"] if port in {p["port"] for p in rule["ports"]}
    ]


def test_the_event_port_admits_the_agents_it_serves() -> None:
    (local,) = _ingress_to(rendered("single-cluster"), "jobs", 8991)
    agents = _container("single-cluster", "node-agent").workload["spec"]["template"]["metadata"]
    assert [_matches(peer["podSelector"], agents["labels"]) for peer in local["from"]] == [True]
    assert all("namespaceSelector" not in peer for peer in local["from"])  # this namespace only
    (central,) = _ingress_to(rendered("control-plane"), "jobs", 8991)
    assert "from" not in central  # other clusters' agents, from addresses unknown here
    (users,) = _ingress_to(rendered("single-cluster"), "api", 8080)
    assert "from" not in users


# --- a namespace of one's own ------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_namespace_is_configurable(overlay: str, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    # kustomize takes no absolute path to a directory it builds on.
    base = os.path.relpath(KUSTOMIZE / "overlays" / overlay, mine)
    (mine / "kustomization.yaml").write_text(
        yaml.safe_dump({"namespace": "gpu-observability", "resources": [base]})
    )
    documents = tuple(render(mine))
    for document in documents:
        namespace = document["metadata"].get("namespace")
        assert namespace == (None if document["kind"] in CLUSTER_SCOPED else "gpu-observability")
        for subject in document.get("subjects") or []:
            assert subject["namespace"] == "gpu-observability", document["metadata"]["name"]
    for container in containers_of(documents):
        _, cfg = _load(container, tmp_path / container.body["name"])
        for key in NAMESPACED_SETTINGS[_component(container.workload)]:
            value = str(_setting(cfg, key))
            assert not value or value.startswith("gpu-observability/"), (key, value)


# --- the API emulator ----------------------------------------------------------------------------


def _kubectl(kubeconfig: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"HOME": str(kubeconfig.parent), "PATH": "/usr/local/bin:/usr/bin:/bin"},
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def _served(apiserver: KubeApiServer, document: Mapping[str, Any]) -> bool:
    try:
        apiserver.resource(document["apiVersion"], document["kind"])
    except KeyError:
        return False
    return True


def _apply(kubeconfig: Path, documents: list[Document]) -> dict[str, str]:
    """`kubectl apply` of the documents; each object's outcome (created, unchanged, ...) by
    kubectl's name of it (`daemonset.apps/lens-node-agent`)."""
    shown = _kubectl(
        kubeconfig, "apply", "--validate=false", "-f", "-", stdin=yaml.safe_dump_all(documents)
    )
    return dict(line.rsplit(" ", 1) for line in shown.splitlines())


@pytest.mark.slow_timeout
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_objects_apply_to_the_api_emulator(
    overlay: str, apiserver: KubeApiServer, tmp_path: Path
) -> None:
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    _kubectl(kubeconfig, "create", "namespace", NAMESPACE)
    for definition in monitors.definitions():
        apiserver.create(definition)
    documents = list(rendered(overlay))
    served = [d for d in documents if _served(apiserver, d)]
    assert {d["kind"] for d in documents if d not in served} <= NOT_SERVED
    assert set(_apply(kubeconfig, served).values()) == {"created"}
    for document in served:
        stored = json.loads(
            _kubectl(
                kubeconfig,
                "get",
                "-n",
                NAMESPACE,
                document["kind"],
                document["metadata"]["name"],
                "-o",
                "json",
            )
        )
        assert stored.get("spec", stored.get("data")) == document.get("spec", document.get("data"))
    # Applied again: nothing to do. An upgrade (a new image) changes the workloads only.
    assert set(_apply(kubeconfig, served).values()) == {"unchanged"}
    text = json.dumps(served)
    for image in ("lens", "lens-netflow"):
        text = text.replace(f'"{image}:{lens.__version__}"', f'"{image}:9.9.9"')
    upgraded = json.loads(text)
    outcomes = _apply(kubeconfig, upgraded)
    workloads = {
        f"{w['kind'].lower()}.apps/{w['metadata']['name']}" for w in _workloads(rendered(overlay))
    }
    assert {n for n, outcome in outcomes.items() if outcome == "configured"} == workloads


# --- the guide -----------------------------------------------------------------------------------


def test_the_guide_names_every_secret_the_manifests_read() -> None:
    guide = (ROOT / "docs" / "deploy.md").read_text()
    used: set[tuple[str, str]] = set()
    for _, container in _all_containers():
        for variable in container.body.get("env") or []:
            ref = (variable.get("valueFrom") or {}).get("secretKeyRef")
            if ref:
                used.add((ref["name"], ref["key"]))
        for mount in container.mounts():
            if mount.kind == "secret":
                secret = mount.volume["secret"]
                used.update((secret["secretName"], item["key"]) for item in secret["items"])
    assert used == set(SECRET_SAMPLES)
    for name, key in sorted(used):
        assert name in guide and key in guide, (name, key)
