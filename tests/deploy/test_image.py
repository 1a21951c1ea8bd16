"""The image's recipe, checked where it cannot be built (our machines have no registry access):
the Dockerfile's COPY sources are in the build context and not kept out by .dockerignore, which
keeps everything else out; base images are pinned by tag; the default target runs as an
unprivileged numeric user; the entrypoint is the `lens` console script pyproject.toml declares;
and every role the rendered Kubernetes manifests start is a command `lens` has.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from lens.cli import app
from tests.deploy.dockerfile import (
    STAGE_REF,
    Dockerfile,
    DockerfileError,
    DockerIgnore,
    Instruction,
    Stage,
    parse,
)

ROOT = Path(__file__).resolve().parents[2]
LENS = Path(sys.executable).with_name("lens")  # the virtualenv's console script
OVERLAYS = ROOT / "deploy" / "kustomize" / "overlays"
UNPRIVILEGED_UID = 65532
# Where each kind that runs pods keeps its pod spec.
POD_SPECS = {
    "Pod": ("spec",),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    **{
        kind: ("spec", "template", "spec")
        for kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job")
    },
}


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return parse((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="module")
def ignore() -> DockerIgnore:
    return DockerIgnore((ROOT / ".dockerignore").read_text())


def _copies(dockerfile: Dockerfile) -> Iterator[tuple[Stage, Instruction, list[str]]]:
    """Each COPY or ADD from the build context, with its sources."""
    for stage in dockerfile.stages:
        for instruction in stage.instructions:
            if instruction.keyword in ("COPY", "ADD"):
                flags, words = instruction.flags_and_args()
                if "from" not in flags:
                    yield stage, instruction, words[:-1]


def _files_under(directory: Path) -> Iterator[str]:
    for folder, _, names in os.walk(directory):
        for name in names:
            yield (Path(folder) / name).relative_to(ROOT).as_posix()


def test_every_copy_source_is_in_the_context(dockerfile: Dockerfile, ignore: DockerIgnore) -> None:
    copied = []
    for stage, instruction, sources in _copies(dockerfile):
        assert sources, f"line {instruction.line}: {instruction.keyword} without a source"
        for source in sources:
            matches = list(ROOT.glob(source.rstrip("/")))
            assert matches, f"line {instruction.line}: {source} is not in the context"
            for match in matches:
                relative = match.relative_to(ROOT).as_posix()
                assert not ignore.excluded(relative), f"{relative} is kept out by .dockerignore"
                copied.append(relative)
        assert stage.name == "builder", "only the builder copies from the context"
    assert sorted(copied) == ["README.md", "lens", "pyproject.toml"]
    # The whole package goes in: every module and every file of its package data.
    files = list(_files_under(ROOT / "lens"))
    kept_out = [path for path in files if ignore.excluded(path)]
    assert all("/__pycache__/" in path for path in kept_out), kept_out
    sent = set(files) - set(kept_out)
    assert {"lens/cli/app.py", "lens/py.typed"} <= sent
    assert any(path.startswith("lens/roles/api/static/vendor/") for path in sent)


@pytest.mark.parametrize(
    "path",
    [
        ".venv/bin/python",
        ".git/HEAD",
        "tests/conftest.py",
        "bench/__main__.py",
        "test-artifacts/dashboard/overview.png",
        ".mypy_cache/3.11/cache.db",
        ".ruff_cache/CACHEDIR.TAG",
        ".pytest_cache/README.md",
        ".hypothesis/examples/x",
        "lens/__pycache__/cli.cpython-311.pyc",
        "lens/cli/__pycache__/app.cpython-311.pyc",
        "lens.egg-info/PKG-INFO",
        "lens/lens.db",
        "docs/metrics.md",
        "deploy/kustomize/base/kustomization.yaml",
        "Dockerfile",
    ],
)
def test_the_context_keeps_everything_else_out(ignore: DockerIgnore, path: str) -> None:
    assert ignore.excluded(path)


def test_base_images_are_pinned_by_tag(dockerfile: Dockerfile) -> None:
    names = {stage.name for stage in dockerfile.stages if stage.name}
    externals = {stage.base for stage in dockerfile.stages if stage.base.lower() not in names}
    assert externals == {"python:3.11-slim-bookworm"}
    for image in externals:
        ref = STAGE_REF.match(image)
        assert ref is not None and ref.group("tag") not in (None, "latest"), image


def _user(dockerfile: Dockerfile, stage: Stage) -> str:
    found = dockerfile.effective(stage, "USER")
    return "root" if found is None else found.text


def test_the_default_target_runs_as_an_unprivileged_numeric_user(dockerfile: Dockerfile) -> None:
    default = dockerfile.stages[-1]  # what `docker build .` builds
    assert default.name == "runtime"
    # Numeric uid and gid: the kubelet can only check runAsNonRoot against a number.
    assert _user(dockerfile, default) == f"{UNPRIVILEGED_UID}:{UNPRIVILEGED_UID}"
    created = " ".join(i.text for i in dockerfile.stage("base").all("RUN"))
    assert f"--uid {UNPRIVILEGED_UID}" in created and f"--gid {UNPRIVILEGED_UID}" in created


def test_the_netflow_target_adds_debian_bcc_and_runs_as_root(dockerfile: Dockerfile) -> None:
    netflow = dockerfile.stage("netflow")
    assert dockerfile.chain(netflow)[1].name == "base"
    runs = " ".join(i.text for i in netflow.all("RUN"))
    assert re.search(r"apt-get install .*\bpython3-bpfcc\b", runs)
    assert "linux-headers-" in runs
    assert "pip" not in runs, "PyPI's package named bcc is not bcc"
    assert _user(dockerfile, netflow) == "0:0"


def test_the_entrypoint_is_the_lens_console_script(dockerfile: Dockerfile) -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["lens"] == "lens.cli:main"
    for name in ("runtime", "netflow"):
        stage = dockerfile.stage(name)
        entrypoint = dockerfile.effective(stage, "ENTRYPOINT")
        assert entrypoint is not None and entrypoint.exec_form() == ["lens"]
        # The manifests pass the role as arguments: no CMD supplies one.
        assert dockerfile.effective(stage, "CMD") is None
    # `lens` resolves to the virtualenv the builder installed the wheel into.
    base = dockerfile.stage("base")
    (copy,) = base.all("COPY")
    flags, (source, target) = copy.flags_and_args()
    assert flags == {"from": "builder"} and source == target == "/opt/lens"
    env = " ".join(i.text for i in base.all("ENV"))
    assert re.search(r"\bPATH=/opt/lens/bin:\$PATH\b", env)
    builder = " ".join(i.text for i in dockerfile.stage("builder").all("RUN"))
    assert "venv --without-pip /opt/lens" in builder
    assert "--python /opt/lens/bin/python install /wheels/lens-" in builder
    assert (ROOT / "README.md").is_file()  # pyproject's readme: the wheel needs it


def test_nothing_is_written_outside_tmp_and_the_data_volume(dockerfile: Dockerfile) -> None:
    env = " ".join(i.text for i in dockerfile.stage("base").all("ENV"))
    for setting in ("HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"):
        assert setting in env
    assert "LENS_SERVICE__DATA_DIR=/var/lib/lens" in env
    (volume,) = dockerfile.stage("base").all("VOLUME")
    assert volume.exec_form() == ["/var/lib/lens"]


def _command_names() -> set[str]:
    """The commands `lens --help` lists."""
    group = typer.main.get_command(app)
    context = group.make_context("lens", ["--help"], resilient_parsing=True)
    assert hasattr(group, "list_commands")
    return set(group.list_commands(context))


def _overlays() -> list[Path]:
    return sorted(p for p in OVERLAYS.iterdir() if (p / "kustomization.yaml").is_file())


def _rendered_roles() -> set[str]:
    """The first argument of every container of every rendered overlay; each container's
    command, when set, must be `lens` itself."""
    roles: set[str] = set()
    for overlay in _overlays():
        rendered = subprocess.run(
            ["kubectl", "kustomize", str(overlay)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for document in yaml.safe_load_all(rendered):
            for container in _containers(document):
                command = container.get("command")
                assert command in (None, ["lens"]), (overlay.name, container["name"], command)
                args = container.get("args") or []
                assert args, f"{overlay.name}: container {container['name']} names no role"
                roles.add(args[0])
    return roles


def _containers(document: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The containers (init ones too) of a rendered object that runs pods."""
    path = POD_SPECS.get(str(document.get("kind"))) if document else None
    if document is None or path is None:
        return []
    spec = document
    for key in path:
        spec = spec[key]
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def _readme_roles() -> set[str]:
    """The roles README.md's table lists (`lens node-agent`, `lens netflow`, ...)."""
    readme = (ROOT / "README.md").read_text()
    found: set[str] = set()
    for row in readme.splitlines():
        if row.startswith("| `lens "):
            found.update(re.findall(r"`lens ([a-z-]+)`", row.split("|")[1]))
    return found


@pytest.mark.slow_timeout  # a `lens ROLE --help` process per role
def test_every_role_the_manifests_start_is_a_lens_command() -> None:
    assert _overlays(), "deploy/kustomize/overlays holds the overlays"
    roles = _rendered_roles()
    assert {"node-agent", "controller", "jobs", "api"} <= roles
    commands = _command_names()
    assert roles <= commands, f"not lens commands: {sorted(roles - commands)}"
    for role in sorted(roles):
        shown = subprocess.run(
            [str(LENS), role, "--help"], capture_output=True, text=True, timeout=60, check=False
        )
        assert shown.returncode == 0, (role, shown.stdout + shown.stderr)


def test_the_readme_lists_the_roles_the_manifests_start() -> None:
    assert _rendered_roles() <= _readme_roles()


# --- the reader itself, against Docker's documented behaviour -----------------------------------


def test_the_reader_joins_continuations_and_skips_comments() -> None:
    parsed = parse(
        "# syntax=docker/dockerfile:1\n"
        "ARG BASE=debian:12\n"
        "FROM ${BASE} AS one\n"
        "RUN a \\\n"
        "  # a comment inside\n"
        "  && b\n"
        "from one\n"
        'entrypoint ["x", "y"]\n'
        "USER 1:1\n"
    )
    one, two = parsed.stages
    assert (one.name, one.base, two.name, two.base) == ("one", "debian:12", "", "one")
    (run,) = one.all("RUN")
    assert run.text == "a && b" and run.line == 4
    assert two.all("ENTRYPOINT")[0].exec_form() == ["x", "y"]
    assert parsed.external_base(two) == "debian:12"
    assert parsed.effective(two, "USER") is not None and parsed.effective(one, "USER") is None


def test_the_reader_refuses_what_is_no_dockerfile() -> None:
    with pytest.raises(DockerfileError, match="before FROM"):
        parse("RUN true\n")
    with pytest.raises(DockerfileError, match="past the end"):
        parse("FROM a\nRUN b \\\n")
    with pytest.raises(DockerfileError, match="no FROM"):
        parse("# only a comment\n")


@pytest.mark.parametrize(
    ("patterns", "path", "excluded"),
    [
        ("*\n!lens\n", "lens/cli/app.py", False),  # re-included with its parent
        ("*\n!lens\n", "tests/x.py", True),
        ("*.md\n", "docs/a.md", False),  # `*` stays within one directory
        ("**/*.md\n", "docs/a.md", True),
        ("**/*.md\n", "a.md", True),  # `**/` also matches no directory
        ("docs\n!docs/keep.md\n", "docs/keep.md", False),
        ("docs\n!docs/keep.md\n", "docs/other.md", True),
        ("/build/\n", "build/x", True),  # cleaned: leading and trailing slashes
        ("# comment\n\n", "anything", False),
        ("a?c\n", "abc", True),
        ("a?c\n", "a/c", False),
        ("[ab].txt\n", "b.txt", True),
    ],
)
def test_the_ignore_file_follows_dockers_matching(patterns: str, path: str, excluded: bool) -> None:
    assert DockerIgnore(patterns).excluded(path) is excluded
