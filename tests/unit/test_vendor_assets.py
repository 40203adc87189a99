"""How the agent inbox's front-end library is fetched and offered (`inbox_http/web/vendor_assets.py`): only a
tarball with the pinned integrity is used, only its one file (and a gzip of it) is written, and the pages offer
the scripts only when every file is there, saying once in the log how to fetch them otherwise. No network: the
tarballs are built here and fetched through file:// addresses."""

from __future__ import annotations

import gzip
import io
import logging
import tarfile
from pathlib import Path

import pytest

from inbox_http.web import vendor_assets

SCRIPT = b"var htmx = {version: '0'};\n"


def _tarball(folder: Path, name: str, script: bytes) -> Path:
    """An npm-style tarball: the file beside others, one of them named to land outside."""
    path = folder / name
    with tarfile.open(path, "w:gz") as archive:
        for member, data in (("package/dist/htmx.min.js", script), ("package/package.json", b"{}"),
                             ("../outside.js", b"escaped")):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _asset(integrity: str) -> vendor_assets.Asset:
    return vendor_assets.Asset("htmx.org", "0.0.1", integrity, "package/dist/htmx.min.js")


def test_the_pinned_tarball_gives_its_one_file_and_a_gzip_of_it(tmp_path, monkeypatch):
    monkeypatch.setattr(vendor_assets, "SHARE", tmp_path / "share")
    genuine = _tarball(tmp_path, "htmx.tgz", SCRIPT)
    asset = _asset(vendor_assets.integrity_of(genuine.read_bytes()))
    written = vendor_assets.fetch(asset, genuine.as_uri())
    assert written == tmp_path / "share" / "htmx.org-0.0.1" / "htmx.min.js" and written.read_bytes() == SCRIPT
    assert gzip.decompress(written.with_name("htmx.min.js.gz").read_bytes()) == SCRIPT
    assert sorted(path.name for path in written.parent.iterdir()) == ["htmx.min.js", "htmx.min.js.gz"]
    assert asset.url == "/app/static/vendor/htmx.org-0.0.1/htmx.min.js"
    assert not (tmp_path / "outside.js").exists()


def test_a_tampered_tarball_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(vendor_assets, "SHARE", tmp_path / "share")
    pinned = vendor_assets.integrity_of(_tarball(tmp_path, "htmx.tgz", SCRIPT).read_bytes())
    tampered = _tarball(tmp_path, "tampered.tgz", SCRIPT.replace(b"'0'", b"'0', steal: true"))
    with pytest.raises(vendor_assets.Unavailable) as refused:
        vendor_assets.fetch(_asset(pinned), tampered.as_uri())
    assert pinned in str(refused.value) and vendor_assets.integrity_of(tampered.read_bytes()) in str(refused.value)
    assert not (tmp_path / "share").exists()


def test_every_asset_is_pinned_by_a_sha512_integrity_and_lives_under_the_environment():
    assert [asset.package for asset in vendor_assets.ASSETS] == ["htmx.org", "htmx-ext-sse", "idiomorph"]
    for asset in vendor_assets.ASSETS:
        assert asset.integrity.startswith("sha512-") and len(asset.integrity) == 95, asset
        assert asset.tarball.startswith("https://registry.npmjs.org/")
        assert vendor_assets.SHARE in asset.path.parents


def test_without_the_files_the_pages_offer_no_script_and_the_log_says_so_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(vendor_assets, "SHARE", tmp_path / "share")
    monkeypatch.setattr(vendor_assets, "_told", False)
    with caplog.at_level(logging.WARNING, logger="inbox_http.web.vendor_assets"):
        assert vendor_assets.script_urls() == [] and vendor_assets.script_urls() == []
    told = [record.getMessage() for record in caplog.records]
    assert len(told) == 1 and "python -m inbox_http.web.vendor_assets" in told[0], told
    for asset in vendor_assets.ASSETS:
        asset.path.parent.mkdir(parents=True)
        asset.path.write_bytes(SCRIPT)
    assert vendor_assets.script_urls() == [asset.url for asset in vendor_assets.ASSETS]
