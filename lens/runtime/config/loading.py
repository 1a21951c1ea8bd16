"""Load the effective Config: defaults < YAML file < `LENS_<SECTION>__<KEY>` environment.

cli calls `load()` once and passes the narrowest section down. This is the only module that
reads the environment (STYLE S11.4): overrides, `LENS_CONFIG`, password variables, the data dir
and the home a path's `~` stands for.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from lens.runtime import dburl, errors, settings
from lens.runtime.config.database import DatabaseConfig
from lens.runtime.config.kube import KubeConfig
from lens.runtime.config.root import Config
from lens.runtime.settings import Secret

ENV_PREFIX = "LENS_"
ENV_CONFIG = "LENS_CONFIG"


def load(path: str | None = None, *, environ: Mapping[str, str] | None = None) -> Config:
    """Load the effective config, or raise ConfigError naming the source and key at fault."""
    env = os.environ if environ is None else environ
    path = path or env.get(ENV_CONFIG) or None
    source = path or "defaults"
    raw = _read_file(path) if path else {}
    raw, origins = _apply_env(raw, env)
    cfg = settings.build(Config, raw, source=source, origins=origins)
    return _resolve(cfg, env, origins, source)


def env_name(key: str) -> str:
    """The environment variable that overrides dotted `key`: api.port → LENS_API__PORT."""
    section, _, name = key.partition(".")
    return f"{ENV_PREFIX}{section.upper()}__{name.upper()}"


def _read_file(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise errors.ConfigError(
            source=path, key="", expected=f"a readable YAML file ({exc.strerror})"
        ) from exc
    except UnicodeDecodeError as exc:
        raise errors.ConfigError(
            source=path, key="", expected=f"a UTF-8 text file (byte {exc.start} is not UTF-8)"
        ) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise errors.ConfigError(source=path, key="", expected=_yaml_problem(exc)) from exc
    except RecursionError as exc:
        raise errors.ConfigError(source=path, key="", expected="YAML nested less deeply") from exc
    except ValueError as exc:  # a scalar YAML cannot convert: an integer of 5,000 digits
        raise errors.ConfigError(
            source=path, key="", expected=f"valid YAML values ({errors.first_line(exc)})"
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise errors.ConfigError(source=path, key="", expected="a YAML mapping of sections")
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "syntax error"
    if mark is not None:
        return f"valid YAML (line {mark.line + 1}, column {mark.column + 1}: {problem})"
    return f"valid YAML ({problem})"


def _apply_env(
    raw: dict[str, Any], env: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Overlay LENS_<SECTION>__<KEY> variables; return the data and each key's source."""
    merged: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    origins: dict[str, str] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = [part.lower() for part in name[len(ENV_PREFIX) :].split("__")]
        origin = f"environment variable {name}"
        if any(not part for part in path) or len(path) != 2:
            raise errors.ConfigError(
                source=origin, key=".".join(path), expected="LENS_<SECTION>__<KEY>"
            )
        section, key = path
        target = merged.setdefault(section, {})
        if not isinstance(target, dict):
            raise errors.ConfigError(source=origin, key=section, expected="a mapping section")
        target[key] = settings.EnvText(env[name])
        origins[f"{section}.{key}"] = origin
        origins.setdefault(section, origin)
    return merged, origins


def default_data_dir(env: Mapping[str, str]) -> str:
    """Where embedded data lives when service.data_dir is empty."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "/var/lib/lens"
    base = env.get("XDG_DATA_HOME")
    if not base:
        home = _home("", env)
        if home is None:
            raise errors.ConfigError(
                source="defaults",
                key="service.data_dir",
                expected="a directory: it is empty and this user has no home (HOME is not set)",
            )
        base = str(Path(home) / ".local/share")
    return str(Path(base) / "lens")


def _home(user: str, env: Mapping[str, str]) -> str | None:
    """The home directory `~user` (or `~` when `user` is empty) stands for, as a shell finds it."""
    if not user and env.get("HOME"):
        return env["HOME"]
    try:
        entry = pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())
    except KeyError:
        return None
    return entry.pw_dir or None


def _expand_user(path: str, env: Mapping[str, str], *, key: str, source: str) -> str:
    """`path` with a leading `~` or `~user` replaced by that home directory; a ConfigError on
    `key` when there is none (Path.expanduser raises RuntimeError, os.path's keeps the `~`)."""
    if not path.startswith("~"):
        return path
    user, _, rest = path[1:].partition("/")
    home = _home(user, env)
    if home is None:
        who = f"there is no user {user!r}" if user else "HOME is not set"
        raise errors.ConfigError(
            source=source, key=key, expected=f"a path whose ~ can be expanded ({who}: {path!r})"
        )
    return str(Path(home) / rest) if rest else home


def _expand_paths(
    cfg: Config, env: Mapping[str, str], origins: Mapping[str, str], source: str
) -> Config:
    """Every key declared a path, with its `~` expanded."""
    for key in settings.leaf_keys(Config, paths_only=True):
        section_name, name = key.split(".")
        section = getattr(cfg, section_name)
        value = getattr(section, name)
        expanded = _expand_user(value, env, key=key, source=origins.get(key, source))
        if expanded != value:
            section = dataclasses.replace(section, **{name: expanded})
            cfg = dataclasses.replace(cfg, **{section_name: section})
    return cfg


def _resolve(
    cfg: Config, env: Mapping[str, str], origins: Mapping[str, str], source: str
) -> Config:
    """Fill values derived from others: paths' `~`, the data dir, the SQLite path, the
    password."""
    cfg = _expand_paths(cfg, env, origins, source)
    data_dir = cfg.service.data_dir or default_data_dir(env)
    service = dataclasses.replace(cfg.service, data_dir=data_dir)
    database = _resolve_database(cfg.database, data_dir, env, origins, source)
    kube = _resolve_kube(cfg.kube, env)
    return dataclasses.replace(cfg, service=service, database=database, kube=kube)


def _resolve_database(
    db: DatabaseConfig,
    data_dir: str,
    env: Mapping[str, str],
    origins: Mapping[str, str],
    source: str,
) -> DatabaseConfig:
    def where(key: str) -> str:
        return origins.get(f"database.{key}", source)

    url = dburl.parse_database_url(db.url)
    if url.engine == "sqlite" and not url.is_memory:
        path = _expand_user(url.database, env, key="database.url", source=where("url"))
        if path != url.database or not Path(path).is_absolute():
            db = dataclasses.replace(db, url=_sqlite_url(str(Path(data_dir) / path)))

    given = [k for k in ("password", "password_file", "password_env") if getattr(db, k)]
    if url.password:
        given.insert(0, "url")
    if len(given) > 1:
        raise errors.ConfigError(
            source=where(given[1]),
            key=f"database.{given[1]}",
            expected=f"only one password source, but database.{given[0]} gives one too",
        )
    if url.engine == "sqlite" and given:
        raise errors.ConfigError(
            source=where(given[0]), key=f"database.{given[0]}", expected="no password for sqlite"
        )
    if db.password_file:
        secret = _read_password_file(db.password_file, source=where("password_file"))
        db = dataclasses.replace(db, password=Secret(secret))
    elif db.password_env:
        if db.password_env not in env:
            raise errors.ConfigError(
                source=where("password_env"),
                key="database.password_env",
                expected=f"the name of a set environment variable ({db.password_env} is not set)",
            )
        db = dataclasses.replace(db, password=Secret(env[db.password_env]))
    return db


def _read_password_file(path: str, *, source: str) -> str:
    """The password a file holds, without its trailing newline; the drivers refuse a NUL."""
    try:
        secret = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise errors.ConfigError(
            source=source,
            key="database.password_file",
            expected=f"a readable file ({problem}: {path!r})",
        ) from exc
    if "\x00" in secret:
        raise errors.ConfigError(
            source=source,
            key="database.password_file",
            expected=f"a password without a NUL character ({path!r} holds one)",
        )
    return secret


def _sqlite_url(path: str) -> str:
    """The sqlite URL of a file path that may hold `%`, `?` or `#` (a data dir named so): the
    URL is %-decoded when parsed, so they are encoded, or `%00` would become a NUL."""
    escaped = path.replace("%", "%25").replace("?", "%3F").replace("#", "%23")
    return dburl.sqlite_url(escaped)


IN_CLUSTER_HOST_ENV = "KUBERNETES_SERVICE_HOST"


def _resolve_kube(kube: KubeConfig, env: Mapping[str, str]) -> KubeConfig:
    """auto → in-cluster inside a pod, else kubeconfig; an empty kubeconfig → $KUBECONFIG or
    ~/.kube/config."""
    source = kube.source
    if source == "auto":
        source = "in-cluster" if env.get(IN_CLUSTER_HOST_ENV) else "kubeconfig"
    path = kube.kubeconfig  # configured: its ~ is expanded already
    if not path:
        listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
        where = "environment variable KUBECONFIG"
        if listed:
            path = _expand_user(listed[0], env, key="kube.kubeconfig", source=where)
        else:
            # No home: the default stays unexpanded and only a role that reads it fails, with
            # the kube client's "no such file", rather than every role at start.
            home = _home("", env)
            path = str(Path(home or "~") / ".kube" / "config")
    return dataclasses.replace(kube, source=source, kubeconfig=path)
