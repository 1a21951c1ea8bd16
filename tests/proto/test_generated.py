"""The committed gRPC stubs are exactly what scripts/generate-protos makes from the .proto files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "lens/proto/_generated"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_stubs_are_current(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run(
        [str(REPO / "scripts/generate-protos"), str(out)],
        check=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert _files(out) == _files(GENERATED), "run scripts/generate-protos and commit the result"


def test_stubs_import_from_the_package() -> None:
    from lens.proto._generated.podresources.v1 import api_pb2, api_pb2_grpc

    assert api_pb2.ListPodResourcesRequest().SerializeToString() == b""
    assert hasattr(api_pb2_grpc, "PodResourcesListerStub")
