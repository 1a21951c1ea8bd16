from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lens.runtime import config, settings

REPO = Path(__file__).resolve().parents[3]
ENV = {"HOME": "/home/tester"}


def test_every_section_is_a_key_of_the_root() -> None:
    sections = {field.name for field in config.Config.__dataclass_fields__.values()}
    assert sections == {
        "cluster",
        "logging",
        "database",
        "server",
        "service",
        "host",
        "kubelet",
        "node_agent",
        "containers",
        "events",
        "jobs",
        "kube",
        "controller",
        "metrics",
        "api",
        "telemetry",
        "tune",
        "netflow",
    }


def test_the_config_is_immutable() -> None:
    cfg = config.load(environ=ENV)
    with pytest.raises(AttributeError):
        cfg.server.port = 1  # type: ignore[misc]


def test_example_file_is_current_and_loads_to_the_defaults(tmp_path: Path) -> None:
    example = REPO / "config.example.yaml"
    assert example.read_text() == config.example(), (
        "regenerate: lens config example > config.example.yaml"
    )
    env = {**ENV, "LENS_SERVICE__DATA_DIR": str(tmp_path)}
    assert config.load(str(example), environ=env) == config.load(environ=env)


def test_example_file_documents_every_key() -> None:
    text = (REPO / "config.example.yaml").read_text()
    data = yaml.safe_load(text)
    for key in settings.leaf_keys(config.Config):
        section, name = key.split(".")
        assert name in data[section], key
