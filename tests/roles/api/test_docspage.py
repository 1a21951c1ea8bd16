"""The docs page and its assets come from the package: every script and style it loads is served
here, matches the vendored manifest, and nothing points at another host."""

from __future__ import annotations

import hashlib
import json
import re

from fastapi.testclient import TestClient

from lens.roles.api import docspage


def test_the_vendored_files_are_the_manifests() -> None:
    manifest = json.loads(docspage.MANIFEST.read_text())
    for package in manifest["packages"]:
        assert package["version"] and package["license"]
        folder = docspage.STATIC / "vendor" / package["name"]
        assert any(name.startswith("LICENSE") for name in package["files"])
        for name, digest in package["files"].items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert docspage.vendored()["swagger-ui-dist"] == manifest["packages"][0]["version"]


def test_the_page_loads_only_this_servers_assets(sqlite_client: TestClient) -> None:
    page = sqlite_client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all("//" not in s for s in sources), sources
    for source in sources:
        asset = sqlite_client.get(f"/{source}")
        assert asset.status_code == 200 and len(asset.content) > 100, source
    script = sqlite_client.get("/static/docs.js").text
    assert "openapi.json" in script and "http" not in script


def test_docs_with_a_slash_goes_to_the_page(sqlite_client: TestClient) -> None:
    moved = sqlite_client.get("/docs/", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == "../docs"


def test_open_paths() -> None:
    assert docspage.is_open("/docs") and docspage.is_open("/static/docs.js")
    assert docspage.is_open("/openapi.json")
    assert not docspage.is_open("/v1/nodes") and not docspage.is_open("/docsx")
