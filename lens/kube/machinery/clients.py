"""API clients from the `kube` config: in-cluster, a kubeconfig file or text, or a URL + token.

A client that cannot be built is a configuration problem (exit 2), named by the key at fault.
"""

from __future__ import annotations

from typing import Any

import kubernetes
import yaml

from lens.runtime import errors, tokenfile
from lens.runtime.config import KubeConfig

# Each reflector holds a connection for its watch; requests need some more beside them.
_CONNECTIONS = 32


def _client(configuration: kubernetes.client.Configuration) -> kubernetes.client.ApiClient:
    configuration.connection_pool_maxsize = _CONNECTIONS
    return kubernetes.client.ApiClient(configuration)


def connect(cfg: KubeConfig) -> kubernetes.client.ApiClient:
    """A client for the cluster `cfg` names (its source already resolved by config.load)."""
    configuration = kubernetes.client.Configuration()
    if cfg.source == "in-cluster":
        try:
            kubernetes.config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except kubernetes.config.ConfigException as exc:
            raise errors.ConfigError(
                source="config", key="kube.source", expected=f"in-cluster credentials ({exc})"
            ) from exc
    elif cfg.source == "url":
        _from_url(cfg, configuration)
    else:
        try:
            kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=cfg.kubeconfig,
                context=cfg.context or None,
                client_configuration=configuration,
            )
        except (kubernetes.config.ConfigException, OSError, yaml.YAMLError) as exc:
            raise errors.ConfigError(
                source="config",
                key="kube.kubeconfig",
                expected=f"a usable kubeconfig at {cfg.kubeconfig} ({errors.first_line(exc)})",
            ) from exc
    return _client(configuration)


def from_kubeconfig_text(text: str, *, where: str) -> kubernetes.client.ApiClient:
    """A client from a kubeconfig held in memory (a Secret's value); `where` names it in errors.

    Such a kubeconfig must embed its certificates and token (`*-data` keys, `token`): paths
    would point into the controller's own filesystem.
    """
    try:
        document = yaml.safe_load(text)
        if not isinstance(document, dict):
            raise kubernetes.config.ConfigException("not a YAML mapping")
        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            document, client_configuration=configuration, persist_config=False
        )
    except (kubernetes.config.ConfigException, yaml.YAMLError, KeyError, TypeError) as exc:
        raise errors.SourceError(
            f"{where}: not a usable kubeconfig ({errors.first_line(exc)})"
        ) from exc
    return _client(configuration)


def _from_url(cfg: KubeConfig, configuration: kubernetes.client.Configuration) -> None:
    if not cfg.url:
        raise errors.ConfigError(
            source="config", key="kube.url", expected="the API server URL when kube.source is url"
        )
    configuration.host = cfg.url.rstrip("/")
    configuration.verify_ssl = not cfg.insecure_skip_tls_verify
    if cfg.ca_file:
        configuration.ssl_ca_cert = cfg.ca_file
    if cfg.token_file:
        tokens = tokenfile.configured(cfg.token_file, key="kube.token_file")

        def refresh(conf: Any) -> None:
            conf.api_key["BearerToken"] = tokens.read()

        configuration.api_key["BearerToken"] = tokens.read()
        configuration.api_key_prefix["BearerToken"] = "Bearer"
        configuration.refresh_api_key_hook = refresh  # type: ignore[assignment]  # typed as None
