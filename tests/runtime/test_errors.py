from __future__ import annotations

from lens.runtime import errors


def test_config_error_reads_as_one_line() -> None:
    error = errors.ConfigError(source="/etc/lens.yaml", key="server.port", expected="an integer")
    assert str(error) == "/etc/lens.yaml: server.port: an integer"
    assert str(errors.ConfigError(source="f", key="", expected="valid YAML")) == "f: valid YAML"


def test_the_tree_matches_the_docstring() -> None:
    assert issubclass(errors.NoDataError, errors.SourceError)
    assert issubclass(errors.DeviceUnavailableError, errors.SourceError)
    for kube in (errors.NotFound, errors.Conflict, errors.Gone, errors.Forbidden):
        assert issubclass(kube, errors.KubeError)
    for direct in (
        errors.ConfigError,
        errors.SourceError,
        errors.KubeError,
        errors.StoreError,
        errors.TemporaryError,
        errors.PermanentError,
        errors.FatalError,
    ):
        assert direct.__bases__ == (errors.LensError,)
    assert errors.TemporaryError("later", delay=3).delay == 3
    assert errors.ListenError.__bases__ == (errors.FatalError,)


def test_listen_error_names_the_address_and_what_moves_it() -> None:
    error = errors.ListenError(
        host="::1",
        port=8991,
        purpose="the event server (gRPC)",
        reason="the port is in use",
        key="jobs.grpc_port",
        env="LENS_JOBS__GRPC_PORT",
    )
    assert str(error) == (
        "cannot listen on [::1]:8991 for the event server (gRPC): the port is in use; "
        "choose another port with the jobs.grpc_port setting or LENS_JOBS__GRPC_PORT"
    )
    assert error.describe("--grpc-port").endswith(
        "with --grpc-port, the jobs.grpc_port setting or LENS_JOBS__GRPC_PORT"
    )


def test_first_line() -> None:
    assert errors.first_line(ValueError("one\ntwo")) == "one"
    assert errors.first_line(ValueError()) == "ValueError"
