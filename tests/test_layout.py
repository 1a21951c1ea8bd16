"""Meta-tests of the code base's shape (STYLE S3, S14.1): sizes, tests per module, layering."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lens"

HARD_LIMIT_LINES = 600
# Modules past this are split into packages, one module per concern (issue 15); the simulators
# and generated code are exempt.
SOFT_LIMIT_LINES = 400
MAX_FUNCTION_LINES = 50  # lines of the body, after the docstring

# May only shrink.
OVERSIZED_MODULES: set[str] = set()
LONG_FUNCTIONS: set[str] = set()
UNTESTED_MODULES: set[str] = set()

NOT_MODULES_UNDER_TEST = {"__init__.py", "__main__.py"}


def _modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "_generated" not in p.parts and "migrations" not in p.parts
    )


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_no_module_exceeds_the_hard_limit() -> None:
    oversized = {_name(p) for p in _modules() if len(p.read_text().splitlines()) > HARD_LIMIT_LINES}
    assert oversized <= OVERSIZED_MODULES, f"split these modules: {oversized - OVERSIZED_MODULES}"


def test_modules_stay_within_the_soft_limit() -> None:
    big = {
        _name(p)
        for p in _modules()
        if "sim" not in p.relative_to(PACKAGE).parts[:1]
        and len(p.read_text().splitlines()) > SOFT_LIMIT_LINES
    }
    assert big == set(), f"split these modules into packages: {big}"


def test_functions_stay_short() -> None:
    long: set[str] = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body
                if ast.get_docstring(node) is not None:
                    body = body[1:] or body
                length = (node.end_lineno or node.lineno) - body[0].lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.add(f"{_name(path)}:{node.name}")
    assert long <= LONG_FUNCTIONS, f"shorten: {long - LONG_FUNCTIONS}"


def test_every_module_has_its_mirrored_test_file() -> None:
    untested = set()
    for path in _modules():
        if path.name in NOT_MODULES_UNDER_TEST:
            continue
        relative = path.relative_to(PACKAGE)
        mirror = REPO / "tests" / relative.parent / f"test_{relative.name}"
        if not mirror.exists():
            untested.add(_name(path))
    assert untested <= UNTESTED_MODULES, f"write tests for: {untested - UNTESTED_MODULES}"


def test_allowlists_only_shrink() -> None:
    existing = {_name(p) for p in _modules()}
    assert existing >= OVERSIZED_MODULES
    assert existing >= UNTESTED_MODULES


def test_layers_point_down() -> None:
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("lint-imports")),
            "--config",
            str(REPO / "pyproject.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
