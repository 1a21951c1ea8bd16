"""The multi-cluster storage config's shape: entries decoded, JSON objects as objects (REFERENCE.md
15.1 #24), and what is written parsed back by a reader."""

from __future__ import annotations

import base64
import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.storage import multicluster, secrets
from lens.storage.multicluster import ClusterStorageConfig
from lens.storage.secrets import SecretData

POSTGRES = {"service": "pg", "port": 5432, "namespace": "lens", "username": "lens"}
OPENSEARCH = {"service": "os", "port": 9200, "scheme": "https"}


def _secret(entries: dict[str, str]) -> SecretData:
    return SecretData(data={k: secrets.encode_text(v) for k, v in entries.items()})


def test_entries_are_decoded_and_json_objects_stay_objects() -> None:
    secret = _secret(
        {
            "postgres": json.dumps(POSTGRES),
            "opensearch": json.dumps(OPENSEARCH),
            "hosts": '["a", "b"]',
            "port": "5432",
            "token": "s3cr3t",
            "odd": '{"x": NaN}',
        }
    )
    config = multicluster.parse_storage_config("east", secret)
    assert config.entries == {
        "postgres": POSTGRES,
        "opensearch": OPENSEARCH,
        "hosts": ["a", "b"],
        "port": "5432",  # text stays text, even when it reads as a number
        "token": "s3cr3t",
        "odd": '{"x": NaN}',  # not JSON another reader takes
    }
    with pytest.raises(errors.SourceError, match="key postgres is not base64"):
        multicluster.parse_storage_config("east", SecretData(data={"postgres": "%%"}))


def test_the_aggregate_is_what_the_originals_reader_parses() -> None:
    configs = {
        "west": ClusterStorageConfig(cluster="west", entries={"postgres": POSTGRES}),
        "east": ClusterStorageConfig(
            cluster="east", entries={"postgres": POSTGRES, "opensearch": OPENSEARCH}
        ),
    }
    data = multicluster.render_aggregate(configs)
    assert list(data) == ["east", "west"]
    # What the original's LoadFromSecret did: base64 of a JSON object of objects per cluster.
    east = json.loads(base64.b64decode(data["east"]))
    assert east == {"opensearch": OPENSEARCH, "postgres": POSTGRES}
    assert isinstance(east["postgres"]["port"], int)
    assert multicluster.parse_aggregate(SecretData(data=data)) == configs


def test_an_aggregate_that_is_no_object_per_cluster_is_a_source_error() -> None:
    for text in ('"opensearch"', "[1]", "{", '{"x": NaN}'):
        with pytest.raises(errors.SourceError, match="aggregate key east"):
            multicluster.parse_aggregate(_secret({"east": text}))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
TEXTS = st.text(max_size=24) | JSON.map(json.dumps)


@given(entries=st.dictionaries(st.text(min_size=1, max_size=8), TEXTS, max_size=4))
def test_any_storage_config_is_written_so_that_it_reads_back(entries: dict[str, str]) -> None:
    config = multicluster.parse_storage_config("c", _secret(entries))
    data = multicluster.render_aggregate({"c": config})
    assert multicluster.parse_aggregate(SecretData(data=data)) == {"c": config}


@given(
    data=st.dictionaries(st.text(max_size=4), st.text(max_size=16) | TEXTS.map(secrets.encode_text))
)
def test_any_aggregate_parses_or_is_a_source_error(data: dict[str, str]) -> None:
    with contextlib.suppress(errors.SourceError):
        multicluster.parse_aggregate(SecretData(data=data))
