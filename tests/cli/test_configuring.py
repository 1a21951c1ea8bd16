from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lens.cli import app
from lens.runtime import settings
from lens.runtime.config import Config

from .conftest import ARGV_TEXT, REPO, assert_no_traceback, assert_one_line, run_lens


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


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"server:\n  host: caf\xe9\n", "{path}: a UTF-8 text file"),
        (bytes(range(256)), "{path}: a UTF-8 text file"),
        (b"a: " + b"[" * 5000 + b"]" * 5000, "{path}: YAML nested less deeply"),
        (b"server:\n  port: " + b"9" * 5000 + b"\n", "{path}: valid YAML values"),
        (b"server:\n  port: " + b"9" * 4000 + b"\n", "{path}: server.port: expected a number"),
        (b"server:\n  idle_timeout_seconds: .nan\n", "{path}: server.idle_timeout_seconds: "),
        (b"service:\n  data_dir: ~nosuchuser-lens/d\n", "{path}: service.data_dir: a path whose"),
        (b"kube:\n  kubeconfig: ~nosuchuser-lens/k\n", "{path}: kube.kubeconfig: a path whose"),
        (b"jobs:\n  tls_key_file: ~nosuchuser-lens/k\n", "{path}: jobs.tls_key_file: a path "),
        (b'server:\n  host: "a\\0"\n', "{path}: server.host: expected text without a NUL"),
        (
            b"database:\n  url: postgresql://u:hunter2@db/le%00ns\n",
            "{path}: database.url: expected no NUL character (%00) in the URL's database name",
        ),
        (
            b"database:\n  url: mysql://u@db/lens\n  password_file: {binary}\n",
            "{path}: database.password_file: a readable file (not UTF-8 text",
        ),
    ],
)
def test_every_unusable_config_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    # Issue 16, point 11, end to end: each of these was a traceback or passed unchecked.
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    path = tmp_path / "lens.yaml"
    path.write_bytes(content.replace(b"{binary}", str(binary).encode()))
    result = run_lens("config", "check", "-c", str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("lens: config error: " + expected.format(path=path))
    assert "hunter2" not in result.stderr


# --- property-based: config check validates anything and stops (issue 16) ----------------------

_KEYS = settings.leaf_keys(Config)
_URLS = st.builds(
    "{}://lens:hunter2xyz@{}{}".format,
    st.sampled_from(["postgresql", "mysql", "sqlite", "http"]),
    ARGV_TEXT,
    ARGV_TEXT,
)


@pytest.mark.slow_timeout  # in-process commands, 40 of them
@given(st.dictionaries(st.sampled_from(_KEYS), ARGV_TEXT), _URLS)
def test_config_check_of_any_environment_is_the_config_or_one_line(
    tmp_path: Path, chosen: dict[str, str], url: str
) -> None:
    env = {f"LENS_{key.upper().replace('.', '__')}": text for key, text in chosen.items()}
    env = {"LENS_SERVICE__DATA_DIR": str(tmp_path), "LENS_DATABASE__URL": url, **env}
    result = CliRunner().invoke(app, ["config", "check"], env=env)
    assert_no_traceback(result, codes=(0, 2))
    if result.exit_code:
        assert_one_line(result, "lens: config error: ")
    assert "hunter2xyz" not in result.output
