"""`lens config check` and `lens config example`: the effective configuration and its keys."""

from __future__ import annotations

import typer

from lens.cli.common import ConfigOption, load

config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)


@config_app.command("check")
def config_check(config: ConfigOption = None) -> None:
    """Validate the config and print the effective values, secrets redacted."""
    import yaml

    from lens.runtime import settings

    cfg = load(config)
    typer.echo(yaml.safe_dump(settings.to_plain(cfg), sort_keys=False).rstrip())


@config_app.command("example")
def config_example() -> None:
    """Print every config key with its default and help (config.example.yaml)."""
    from lens.runtime import config

    typer.echo(config.example(), nl=False)
