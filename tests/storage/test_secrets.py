"""Secrets as the storage jobs see them: references, the data of a read, base64 values."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.storage import secrets
from lens.storage.secrets import SecretData, SecretRef

REF = SecretRef(namespace="kube-system", name="jfs")


def test_a_reference_reads_and_writes_as_the_original_did() -> None:
    assert SecretRef.parse("kube-system/jfs") == REF
    assert str(REF) == "kube-system/jfs"
    assert REF.to_json() == {"Namespace": "kube-system", "Name": "jfs"}
    assert not REF.templated
    assert SecretRef(namespace="${pvc.namespace}", name="jfs").templated


def test_a_secret_object_gives_its_data_and_version() -> None:
    document = {"metadata": {"name": "jfs", "resourceVersion": "7"}, "data": {"name": "dm9s"}}
    assert secrets.parse_secret(document, REF) == SecretData(
        data={"name": "dm9s"}, resource_version="7"
    )
    assert secrets.parse_secret({"metadata": {}}, REF) == SecretData(data={})
    with pytest.raises(errors.SourceError, match="kube-system/jfs: data holds a value"):
        secrets.parse_secret({"data": {"name": 1}}, REF)


def test_values_are_base64_utf8_text() -> None:
    assert secrets.decode_text(secrets.encode_text("volé"), what="key name") == "volé"
    for bad in ("not base64!", "/w==", "ÿ"):  # not base64; base64 of a byte that is no UTF-8
        with pytest.raises(errors.SourceError, match="key name is not base64-encoded UTF-8"):
            secrets.decode_text(bad, what="key name")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    document=JSON
    | st.fixed_dictionaries({"metadata": JSON, "data": JSON})
    | st.fixed_dictionaries({"data": st.dictionaries(st.text(max_size=4), JSON, max_size=2)})
)
def test_any_answer_is_secret_data_or_a_source_error(document: object) -> None:
    try:
        found = secrets.parse_secret(document, REF)
    except errors.SourceError:
        return
    assert all(isinstance(v, str) for v in found.data.values())


@given(value=st.text(max_size=20))
def test_any_value_decodes_or_is_a_source_error(value: str) -> None:
    with contextlib.suppress(errors.SourceError):
        secrets.decode_text(value, what="v")
