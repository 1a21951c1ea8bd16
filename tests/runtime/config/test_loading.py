from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import config, dburl, errors, settings
from lens.runtime.config import loading
from lens.runtime.settings import Secret

ENV = {"HOME": "/home/tester"}


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "lens.yaml"
    path.write_text(text)
    return str(path)


def test_defaults_resolve_the_data_dir_and_sqlite_path(tmp_path: Path) -> None:
    cfg = config.load(environ={"LENS_SERVICE__DATA_DIR": str(tmp_path)})
    assert cfg.service.data_dir == str(tmp_path)
    assert cfg.database.url == f"sqlite:///{tmp_path}/lens.db"
    assert cfg.cluster.name == "default"
    assert cfg.logging == config.LoggingConfig()


def test_default_data_dir_follows_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading.os, "geteuid", lambda: 1000)
    assert config.default_data_dir({"HOME": "/home/u"}) == "/home/u/.local/share/lens"
    assert config.default_data_dir({"XDG_DATA_HOME": "/x"}) == "/x/lens"
    monkeypatch.setattr(loading.os, "geteuid", lambda: 0)
    assert config.default_data_dir({}) == "/var/lib/lens"


def test_file_then_environment_override_defaults(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "logging:\n  level: debug\n  format: json\n"
        "server:\n  port: 9000\n"
        "cluster:\n  name: prod-a\n",
    )
    env = {**ENV, "LENS_SERVER__PORT": "9100", "LENS_DATABASE__URL": "postgresql://lens@db/lens"}
    cfg = config.load(path, environ=env)
    assert cfg.logging == config.LoggingConfig(level="debug", format="json")
    assert cfg.server.port == 9100
    assert cfg.cluster.name == "prod-a"
    assert cfg.database.url == "postgresql://lens@db/lens"


def test_env_name_is_the_variable_that_overrides_a_key() -> None:
    assert config.env_name("jobs.grpc_port") == "LENS_JOBS__GRPC_PORT"
    for key in ("api.port", "server.port", "jobs.grpc_port"):
        cfg = config.load(environ={**ENV, config.env_name(key): "9123"})
        section, name = key.split(".")
        assert getattr(getattr(cfg, section), name) == 9123


def test_lens_config_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "server:\n  port: 7000\n")
    assert config.load(environ={**ENV, "LENS_CONFIG": path}).server.port == 7000


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        (
            "logging:\n  levle: info\n",
            "logging.levle",
            "unknown key (expected one of: format, level)",
        ),
        (
            "loging: {}\n",
            "loging",
            "unknown key (expected one of: api, cluster, containers, controller, database,",
        ),
        ("server:\n  port: http\n", "server.port", "expected an integer, got string 'http'"),
        ("server:\n  port: 70000\n", "server.port", "expected a number from 0 to 65535, got 70000"),
        (
            "logging:\n  level: loud\n",
            "logging.level",
            "expected one of: debug, info, warning, error",
        ),
        ("database:\n  url: oracle://x/y\n", "database.url", "expected a URL starting with one of"),
        ("cluster:\n  name: Prod_A\n", "cluster.name", "expected a DNS label"),
        (
            "service:\n  loop_jitter_ratio: 0.9\n",
            "service.loop_jitter_ratio",
            "expected a number from 0 to 0.5",
        ),
    ],
)
def test_a_bad_file_value_names_the_file_and_key(
    tmp_path: Path, text: str, key: str, expected: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(errors.ConfigError) as caught:
        config.load(path, environ=ENV)
    assert caught.value.source == path
    assert caught.value.key == key
    assert caught.value.expected.startswith(expected)
    assert "\n" not in str(caught.value)


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ={**ENV, "LENS_SERVER__PORT": "abc"})
    assert caught.value.source == "environment variable LENS_SERVER__PORT"
    assert caught.value.key == "server.port"


@pytest.mark.parametrize(
    ("name", "key"),
    [("LENS_SERVER__PROT", "server.prot"), ("LENS_NOPE__X", "nope"), ("LENS_A__B__C", "a.b.c")],
)
def test_an_unknown_environment_override_is_refused(name: str, key: str) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ={**ENV, name: "1"})
    assert caught.value.source == f"environment variable {name}"
    assert caught.value.key == key


def test_environment_variables_without_a_section_are_not_overrides() -> None:
    cfg = config.load(environ={**ENV, "LENS_TEST_POSTGRES_URL": "x", "LENS_OTHER": "y"})
    assert cfg.server == config.ServerConfig()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("server: [1\n", "valid YAML (line 2, column 1:"),
        ("- a\n- b\n", "a YAML mapping of sections"),
    ],
)
def test_unreadable_yaml_is_one_clear_error(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(errors.ConfigError) as caught:
        config.load(path, environ=ENV)
    assert caught.value.expected.startswith(expected)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="a readable YAML file"):
        config.load(str(tmp_path / "absent.yaml"), environ=ENV)


def test_an_empty_file_means_defaults(tmp_path: Path) -> None:
    assert config.load(_write(tmp_path, ""), environ=ENV).server == config.ServerConfig()


def test_password_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("hunter2\n")
    env = {
        **ENV,
        "LENS_DATABASE__URL": "postgresql://lens@db/lens",
        "LENS_DATABASE__PASSWORD_FILE": str(secret),
    }
    cfg = config.load(environ=env)
    assert cfg.database.password == Secret("hunter2")
    assert "hunter2" not in yaml.safe_dump(settings.to_plain(cfg))


def test_password_from_an_environment_variable() -> None:
    env = {
        **ENV,
        "LENS_DATABASE__URL": "mysql://root@db/lens",
        "LENS_DATABASE__PASSWORD_ENV": "DB_PW",
        "DB_PW": "s3cret",
    }
    assert config.load(environ=env).database.password.reveal() == "s3cret"


def test_password_variable_that_is_not_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "database:\n  url: mysql://root@db/lens\n  password_env: DB_PW\n")
    with pytest.raises(errors.ConfigError) as caught:
        config.load(path, environ=ENV)
    assert caught.value.key == "database.password_env"
    assert caught.value.source == path
    assert "DB_PW is not set" in caught.value.expected


def test_password_file_that_cannot_be_read(tmp_path: Path) -> None:
    env = {
        **ENV,
        "LENS_DATABASE__URL": "mysql://r@h/d",
        "LENS_DATABASE__PASSWORD_FILE": "/nonexistent",
    }
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ=env)
    assert caught.value.source == "environment variable LENS_DATABASE__PASSWORD_FILE"
    assert "a readable file" in caught.value.expected


def test_two_password_sources_are_refused() -> None:
    env = {
        **ENV,
        "LENS_DATABASE__URL": "postgresql://lens:inline@db/lens",
        "LENS_DATABASE__PASSWORD": "other",
    }
    with pytest.raises(errors.ConfigError, match="only one password source"):
        config.load(environ=env)


def test_sqlite_takes_no_password() -> None:
    with pytest.raises(errors.ConfigError, match="no password for sqlite"):
        config.load(environ={**ENV, "LENS_DATABASE__PASSWORD": "x"})


def test_effective_config_never_shows_a_url_password() -> None:
    cfg = config.load(environ={**ENV, "LENS_DATABASE__URL": "postgresql://lens:hunter2@db/lens"})
    shown = yaml.safe_dump(settings.to_plain(cfg))
    assert "hunter2" not in shown
    assert "postgresql://lens:***@db/lens" in shown


def test_the_kube_source_resolves_from_where_the_process_runs() -> None:
    outside = config.load(environ=ENV).kube
    assert (outside.source, outside.kubeconfig) == ("kubeconfig", "/home/tester/.kube/config")
    inside = config.load(environ={**ENV, "KUBERNETES_SERVICE_HOST": "10.96.0.1"}).kube
    assert inside.source == "in-cluster"
    listed = config.load(environ={**ENV, "KUBECONFIG": "/etc/a.conf:/etc/b.conf"}).kube
    assert listed.kubeconfig == "/etc/a.conf"
    chosen = config.load(
        environ={**ENV, "KUBERNETES_SERVICE_HOST": "x", "LENS_KUBE__SOURCE": "url"}
    ).kube
    assert chosen.source == "url"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("service:\n  metrics_interval_seconds: .nan\n", "service.metrics_interval_seconds"),
        ("node_agent:\n  gpu_interval_seconds: .inf\n", "node_agent.gpu_interval_seconds"),
    ],
)
def test_nan_and_infinity_are_no_settings(tmp_path: Path, text: str, key: str) -> None:
    # A NaN passed every range check, and a NaN interval spun the agent's loop (issue 16, #11).
    with pytest.raises(errors.ConfigError) as caught:
        config.load(_write(tmp_path, text), environ=ENV)
    assert caught.value.key == key
    assert caught.value.expected.startswith("expected a finite number")
    with pytest.raises(errors.ConfigError, match="expected a finite number"):
        config.load(environ={**ENV, "LENS_SERVICE__STOP_TIMEOUT_SECONDS": "nan"})


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"server:\n  host: caf\xe9\n", "a UTF-8 text file (byte 19 is not UTF-8)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "a UTF-8 text file"),
        (b"a: " + b"[" * 3000 + b"]" * 3000, "YAML nested less deeply"),
        (b"server:\n  port: " + b"9" * 5000 + b"\n", "valid YAML values"),
    ],
)
def test_a_file_yaml_cannot_read_is_one_clear_error(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "lens.yaml"
    path.write_bytes(content)
    with pytest.raises(errors.ConfigError) as caught:
        config.load(str(path), environ=ENV)
    assert caught.value.expected.startswith(expected)
    assert "\n" not in str(caught.value)


def test_a_binary_password_file_is_a_config_error(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_bytes(b"\xff\xfe\x00")
    env = {
        **ENV,
        "LENS_DATABASE__URL": "postgresql://lens@db/lens",
        "LENS_DATABASE__PASSWORD_FILE": str(secret),
    }
    with pytest.raises(errors.ConfigError, match="not UTF-8 text"):
        config.load(environ=env)


NO_USER = "~nosuchuser-lens"


@pytest.mark.parametrize("key", settings.leaf_keys(config.Config, paths_only=True))
def test_a_path_of_a_user_that_does_not_exist_is_a_config_error(tmp_path: Path, key: str) -> None:
    # Path.expanduser raised RuntimeError (a traceback) for service.data_dir and kube.kubeconfig,
    # and other paths kept the ~ (issue 16, #11).
    section, name = key.split(".")
    path = _write(tmp_path, f"{section}:\n  {name}: {NO_USER}/x\n")
    with pytest.raises(errors.ConfigError) as caught:
        config.load(path, environ=ENV)
    assert (caught.value.source, caught.value.key) == (path, key)
    assert caught.value.expected == (
        f"a path whose ~ can be expanded (there is no user 'nosuchuser-lens': '{NO_USER}/x')"
    )


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("LENS_SERVICE__DATA_DIR", NO_USER, "service.data_dir"),
        ("LENS_DATABASE__URL", f"sqlite:///{NO_USER}/lens.db", "database.url"),
        ("KUBECONFIG", f"{NO_USER}/config", "kube.kubeconfig"),
    ],
)
def test_an_environment_path_of_no_user_names_its_variable(
    variable: str, value: str, key: str
) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ={**ENV, variable: value})
    assert (caught.value.source, caught.value.key) == (f"environment variable {variable}", key)


def test_a_leading_tilde_is_the_home_of_the_environment_or_of_the_user() -> None:
    me = pwd.getpwuid(os.getuid())
    env = {
        **ENV,
        "LENS_SERVICE__DATA_DIR": "~/data",
        "LENS_KUBE__TOKEN_FILE": f"~{me.pw_name}/token",
        "LENS_JOBS__TLS_CERT_FILE": "~",
        "LENS_HOST__ROOT": "/host/~",
    }
    cfg = config.load(environ=env)
    assert cfg.service.data_dir == "/home/tester/data"
    assert cfg.database.url == "sqlite:////home/tester/data/lens.db"
    assert cfg.kube.token_file == str(Path(me.pw_dir) / "token")
    assert cfg.jobs.tls_cert_file == "/home/tester"
    assert cfg.host.root == "/host/~"
    listed = config.load(environ={**ENV, "LENS_DATABASE__URL": "sqlite:///~/a.db"})
    assert listed.database.url == "sqlite:////home/tester/a.db"


def _uid_without_an_account() -> int:
    uid = 2**31 - 2
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid -= 1


def test_without_a_home_only_the_default_data_dir_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # A user with neither HOME nor an account (a container's random uid) got a traceback.
    monkeypatch.setattr(loading.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(loading.os, "getuid", _uid_without_an_account)
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ={})
    assert caught.value.key == "service.data_dir"
    with pytest.raises(errors.ConfigError, match="HOME is not set"):
        config.load(environ={"LENS_KUBE__CA_FILE": "~/ca.crt"})
    cfg = config.load(environ={"LENS_SERVICE__DATA_DIR": "/d"})
    assert cfg.kube.kubeconfig == "~/.kube/config"


def test_a_data_dir_with_percent_signs_stays_that_directory() -> None:
    # A data dir holding "%00" became a NUL in the SQLite path once the URL was parsed.
    cfg = config.load(environ={"LENS_SERVICE__DATA_DIR": "/d/a%00b?c#d"})
    assert dburl.parse_database_url(cfg.database.url).database == "/d/a%00b?c#d/lens.db"


def test_a_password_file_holding_a_nul_is_a_config_error(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_bytes(b"hunter\x002\n")
    env = {
        **ENV,
        "LENS_DATABASE__URL": "postgresql://lens@db/lens",
        "LENS_DATABASE__PASSWORD_FILE": str(secret),
    }
    with pytest.raises(errors.ConfigError) as caught:
        config.load(environ=env)
    assert caught.value.key == "database.password_file"
    assert "hunter" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("server:\n  port: " + "9" * 4000 + "\n", "server.port"),
        ("server:\n  read_timeout_seconds: " + "9" * 400 + "\n", "server.read_timeout_seconds"),
        ('server:\n  host: "0.0.0.0\\0"\n', "server.host"),
        ('"ser\\nver": {}\n', "'ser\\nver'"),
    ],
)
def test_values_that_raised_elsewhere_are_one_config_error(
    tmp_path: Path, text: str, key: str
) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        config.load(_write(tmp_path, text), environ=ENV)
    assert caught.value.key == key
    assert "\n" not in str(caught.value)


# --- property-based: any input is a Config or one ConfigError (issue 16) -----------------------

_KEYS = settings.leaf_keys(config.Config)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(max_size=8)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
# What an environment variable can hold on Linux: any bytes but NUL, decoded as Python does.
_ENV_TEXT = st.text() | st.binary().map(os.fsdecode)
_ENV_TEXT = _ENV_TEXT.filter(lambda text: "\x00" not in text)


def _assert_loads_or_one_error(path: str | None, environ: dict[str, str]) -> None:
    try:
        cfg = config.load(path, environ=environ)
    except errors.ConfigError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(cfg, config.Config)
        yaml.safe_dump(settings.to_plain(cfg))  # `lens config check` can print it


@given(st.binary())
def test_any_file_is_a_config_or_one_config_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "lens.yaml"
    path.write_bytes(content)
    _assert_loads_or_one_error(str(path), ENV)


@given(st.text())
def test_any_yaml_text_is_a_config_or_one_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "lens.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    _assert_loads_or_one_error(str(path), ENV)


@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES))
def test_any_value_of_a_known_key_is_a_config_or_one_config_error(
    tmp_path: Path, chosen: dict[str, object]
) -> None:
    data: dict[str, dict[str, object]] = {}
    for key, value in chosen.items():
        section, name = key.split(".")
        data.setdefault(section, {})[name] = value
    path = tmp_path / "lens.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    _assert_loads_or_one_error(str(path), ENV)


@given(st.dictionaries(st.sampled_from(_KEYS), _ENV_TEXT))
def test_any_environment_override_is_a_config_or_one_config_error(
    chosen: dict[str, str],
) -> None:
    overrides = {f"LENS_{key.upper().replace('.', '__')}": text for key, text in chosen.items()}
    _assert_loads_or_one_error(None, {**ENV, **overrides})
