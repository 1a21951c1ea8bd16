from __future__ import annotations

import ssl
from pathlib import Path

from cryptography import x509

from lens.sim.kubelet import certs


def test_the_serving_certificate_chains_to_the_ca_and_names_localhost(tmp_path: Path) -> None:
    issued = certs.issue(tmp_path / "pki")
    cert = x509.load_pem_x509_certificate(issued.cert_file.read_bytes())
    ca = x509.load_pem_x509_certificate(issued.ca_file.read_bytes())
    assert cert.issuer == ca.subject
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    assert issued.key_file.stat().st_mode & 0o777 == 0o600
    context = ssl.create_default_context(cafile=str(issued.ca_file))
    context.load_cert_chain(issued.cert_file, issued.key_file)
