"""The pages' own files as the service serves them (`inbox_http/web/app_assets.py`): the scripts joined in their
order, each text gzipped to the same bytes, each address named by its content, and a changed file a new address
without a restart. No server: tests/e2e/test_app_assets.py serves them on a socket and loads them in a browser."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil

import pytest

from inbox_http.web import app_assets
from inbox_http.web.app_assets import BUNDLE, FOLDER, SCRIPTS, WORKSPACE_BUNDLE, Assets


def _copy(tmp_path):
    folder = tmp_path / "app"
    shutil.copytree(FOLDER, folder)
    return folder


def test_the_bundle_is_the_six_scripts_one_after_another_in_the_pages_order():
    body = Assets(FOLDER).current()[BUNDLE].body
    assert SCRIPTS == ("picker.js", "app.js", "list_tools.js", "attachments.js", "mentions.js", "availability.js")
    assert body == b"".join((FOLDER / name).read_bytes() for name in SCRIPTS)
    # Every script of the folder is in it: one added there and not here would never reach a page.
    assert {path.name for path in FOLDER.glob("*.js")} == set(SCRIPTS)


def test_the_bundle_is_strict_from_its_first_statement_as_each_script_was():
    for name in SCRIPTS:
        assert '"use strict";' in (FOLDER / name).read_text(), name
    first_statement = next(line for line in (FOLDER / SCRIPTS[0]).read_text().splitlines()
                           if line.strip() and not line.startswith("//"))
    assert first_statement == '"use strict";'


def test_a_script_without_a_last_newline_does_not_run_into_the_next(tmp_path):
    (tmp_path / "one.js").write_bytes(b"let a = 1; // the end")
    (tmp_path / "two.js").write_bytes(b"let b = 2;\n")
    assert app_assets.joined(tmp_path, ("one.js", "two.js")) == b"let a = 1; // the end\nlet b = 2;\n"


def test_each_answer_decompresses_to_its_file_and_its_address_names_its_content():
    built = Assets(FOLDER).current()
    # With the library fetched, the workspace's bundle too (tests/unit/test_workspace_bundle.py).
    assert set(built) == {BUNDLE, "app.css", "favicon.svg"} | ({WORKSPACE_BUNDLE} if app_assets.library() else set())
    assert built["app.css"].body == (FOLDER / "app.css").read_bytes()
    assert built["favicon.svg"].body == (FOLDER / "favicon.svg").read_bytes()
    for asset in built.values():
        assert asset.version == hashlib.sha256(asset.body).hexdigest()[:16]
        assert asset.url == f"/app/static/v/{asset.version}/{asset.name}"
        if asset.gzipped is not None:
            assert gzip.decompress(asset.gzipped) == asset.body and len(asset.gzipped) < len(asset.body)
    assert built[BUNDLE].gzipped is not None and built["app.css"].gzipped is not None
    # What gzip would make larger goes as it is.
    assert app_assets._asset("tiny.css", b"a{}").gzipped is None


def test_a_changed_file_gets_a_new_address_at_once_and_the_others_keep_theirs(tmp_path):
    folder = _copy(tmp_path)
    assets = Assets(folder)
    before = {name: asset.url for name, asset in assets.current().items()}
    assert assets.current() is assets.current()  # nothing changed: built once
    with open(folder / "mentions.js", "a") as script:
        script.write("// edited\n")
    after = {name: asset.url for name, asset in assets.current().items()}
    assert after[BUNDLE] != before[BUNDLE] and b"})();\n// edited\n" in assets.current()[BUNDLE].body
    assert after["app.css"] == before["app.css"] and after["favicon.svg"] == before["favicon.svg"]
    # An edit that keeps the size: the file's time says it changed.
    css = (folder / "app.css").read_bytes()
    (folder / "app.css").write_bytes(css.replace(b"{", b"{ ", 1)[:len(css)])
    stat = os.stat(folder / "app.css")
    os.utime(folder / "app.css", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert assets.url("app.css") != before["app.css"]


@pytest.mark.parametrize("header, takes", [
    ("gzip, deflate", True), ("gzip, deflate, br, zstd", True), ("GZIP", True), ("*", True),
    ("", False), ("identity", False), ("br", False), ("gzip;q=0", False), ("gzip;q=0, *", False),
    ("*;q=0, gzip", True), ("gzip; q=0.5", True), ("deflate, *;q=0", False),
])
def test_gzip_goes_only_to_a_client_that_takes_it(header, takes):
    assert app_assets.takes_gzip(header) is takes
