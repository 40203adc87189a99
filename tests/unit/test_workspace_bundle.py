"""The agent workspace's one script (`inbox_http/web/app_assets.py`, WORKSPACE_BUNDLE): the front-end library's
files in their order, then the pages' six scripts inside one function, so that the workspace's first load asks for
one script instead of four; none without the library. No server: tests/e2e/test_app_assets.py loads it in a
browser."""

from __future__ import annotations

import shutil

import pytest

from inbox_http.web import app_assets, vendor_assets
from inbox_http.web.app_assets import BUNDLE, FOLDER, WORKSPACE_BUNDLE, Assets


@pytest.fixture
def library(tmp_path, monkeypatch):
    """Three library files of this test's own, the second without a last newline."""
    files = []
    for n, text in enumerate((b"var htmx = {};\n", b"htmx.sse = 1;", b"var Idiomorph = {};\n")):
        path = tmp_path / "share" / f"lib{n}.js"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text)
        files.append(path)
    monkeypatch.setattr(app_assets, "library", lambda: tuple(files))
    return files


def test_the_library_then_the_six_in_one_function_strict_from_its_first_statement(library):
    built = Assets(FOLDER).current()
    body = built[WORKSPACE_BUNDLE].body
    assert body == (b"var htmx = {};\nhtmx.sse = 1;\nvar Idiomorph = {};\n(function () {\n" + built[BUNDLE].body +
                    b"}());\n")
    # Inside the function the six begin as app-scripts.js does: "use strict" the first statement of its body.
    inside = body.split(b"(function () {\n", 1)[1].decode()
    first = next(line for line in inside.splitlines() if line.strip() and not line.startswith("//"))
    assert first == '"use strict";'
    assert built[WORKSPACE_BUNDLE].url == f"/app/static/v/{built[WORKSPACE_BUNDLE].version}/{WORKSPACE_BUNDLE}"


def test_a_changed_library_file_is_a_new_address_for_the_workspaces_script_alone(tmp_path, library):
    folder = tmp_path / "app"
    shutil.copytree(FOLDER, folder)
    assets = Assets(folder)
    before = {name: asset.url for name, asset in assets.current().items()}
    library[1].write_bytes(b"htmx.sse = 2;\n")
    after = {name: asset.url for name, asset in assets.current().items()}
    assert after[WORKSPACE_BUNDLE] != before[WORKSPACE_BUNDLE]
    assert {name: url for name, url in after.items() if name != WORKSPACE_BUNDLE} == \
        {name: url for name, url in before.items() if name != WORKSPACE_BUNDLE}


def test_without_the_library_no_workspace_script_and_the_page_takes_the_pages_own(tmp_path, monkeypatch):
    monkeypatch.setattr(vendor_assets, "SHARE", tmp_path / "nothing")
    monkeypatch.setattr(vendor_assets, "_told", True)
    assert app_assets.library() == ()
    monkeypatch.setattr(app_assets, "assets", Assets(FOLDER))
    assert WORKSPACE_BUNDLE not in app_assets.assets.current()
    assert app_assets.workspace_script_url() is None


def test_the_workspaces_script_is_named_when_the_library_is_there(monkeypatch, library):
    monkeypatch.setattr(vendor_assets, "script_urls", lambda: [asset.url for asset in vendor_assets.ASSETS])
    monkeypatch.setattr(app_assets, "assets", Assets(FOLDER))
    assert app_assets.workspace_script_url() == app_assets.assets.current()[WORKSPACE_BUNDLE].url
