"""The one typed, immutable Config: its sections (one module per part of Lens), the root and
the loading of defaults < YAML file < `LENS_<SECTION>__<KEY>` environment."""

from lens.runtime.config.api import ApiConfig
from lens.runtime.config.database import DatabaseConfig
from lens.runtime.config.jobs import JobsConfig
from lens.runtime.config.kube import ControllerConfig, KubeConfig
from lens.runtime.config.loading import (
    ENV_CONFIG,
    ENV_PREFIX,
    IN_CLUSTER_HOST_ENV,
    default_data_dir,
    env_name,
    load,
)
from lens.runtime.config.metrics import MetricsConfig
from lens.runtime.config.netflow import NetflowConfig
from lens.runtime.config.node import (
    ContainersConfig,
    EventsConfig,
    HostConfig,
    KubeletConfig,
    NodeAgentConfig,
)
from lens.runtime.config.process import ClusterConfig, LoggingConfig, ServerConfig, ServiceConfig
from lens.runtime.config.root import EXAMPLE_HEADER, Config, example
from lens.runtime.config.telemetry import TelemetryConfig
from lens.runtime.config.tune import TuneConfig

__all__ = [
    "ENV_CONFIG",
    "ENV_PREFIX",
    "EXAMPLE_HEADER",
    "IN_CLUSTER_HOST_ENV",
    "ApiConfig",
    "ClusterConfig",
    "Config",
    "ContainersConfig",
    "ControllerConfig",
    "DatabaseConfig",
    "EventsConfig",
    "HostConfig",
    "JobsConfig",
    "KubeConfig",
    "KubeletConfig",
    "LoggingConfig",
    "MetricsConfig",
    "NetflowConfig",
    "NodeAgentConfig",
    "ServerConfig",
    "ServiceConfig",
    "TelemetryConfig",
    "TuneConfig",
    "default_data_dir",
    "env_name",
    "example",
    "load",
]
