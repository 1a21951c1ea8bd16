"""The kustomize overlays under deploy/kustomize, rendered by `kubectl kustomize`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZE = ROOT / "deploy" / "kustomize"

Document = dict[str, Any]


def overlays() -> dict[str, Path]:
    """Every overlay (a directory with a kustomization.yaml), by name."""
    found = sorted((KUSTOMIZE / "overlays").glob("*/kustomization.yaml"))
    return {path.parent.name: path.parent for path in found}


def render(directory: Path) -> list[Document]:
    """`kubectl kustomize DIRECTORY`, as documents; a failure names kustomize's complaint."""
    done = subprocess.run(
        ["kubectl", "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"kubectl kustomize {directory}: {done.stderr}"
    return [d for d in yaml.safe_load_all(done.stdout) if d]
