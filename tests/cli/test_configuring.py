from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import REPO, run_lens


def test_config_check_prints_the_effective_config_with_secrets_redacted(tmp_path: Path) -> None:
    config = tmp_path / "lens.yaml"
    config.write_text(
        "database:\n  url: postgresql://lens:hunter2@db.example/lens\nserver:\n  port: 9000\n"
    )
    result = run_lens(
        "config", "check", "--config", str(config), env={"LENS_LOGGING__LEVEL": "debug"}
    )
    assert result.returncode == 0, result.stderr
    assert "hunter2" not in result.stdout
    assert "url: postgresql://lens:***@db.example/lens" in result.stdout
    assert "port: 9000" in result.stdout
    assert "level: debug" in result.stdout


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        (
            "server:\n  port: lots\n",
            {},
            "lens: config error: {path}: server.port: expected an integer, got string 'lots'",
        ),
        (
            "logging:\n  colour: red\n",
            {},
            "lens: config error: {path}: logging.colour: "
            "unknown key (expected one of: format, level)",
        ),
        (
            "",
            {"LENS_SERVER__PORT": "-1"},
            "lens: config error: environment variable LENS_SERVER__PORT: server.port: "
            "expected a number from 0 to 65535, got -1",
        ),
    ],
)
def test_a_bad_config_prints_one_line_and_exits_2(
    tmp_path: Path, text: str, env: dict[str, str], message: str
) -> None:
    path = tmp_path / "lens.yaml"
    path.write_text(text)
    result = run_lens("config", "check", "-c", str(path), env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [message.format(path=path)]


def test_lens_config_environment_variable_is_the_default_file(tmp_path: Path) -> None:
    path = tmp_path / "lens.yaml"
    path.write_text("cluster:\n  name: prod-west\n")
    result = run_lens("config", "check", env={"LENS_CONFIG": str(path)})
    assert "name: prod-west" in result.stdout


def test_config_example_matches_the_committed_file() -> None:
    assert run_lens("config", "example").stdout == (REPO / "config.example.yaml").read_text()
