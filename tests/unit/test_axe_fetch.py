"""How `tests/axe.py` fetches axe-core: only the tarball pinned by its integrity is used, only its axe.min.js is
written. No network: the tarballs are built here and fetched through file:// addresses."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from tests import axe

SCRIPT = b"/*! axe v0 */ window.axe = {};\n"


def _tarball(folder: Path, name: str, script: bytes) -> Path:
    """An npm-style tarball: package/axe.min.js beside other files, one of them named to land outside."""
    path = folder / name
    with tarfile.open(path, "w:gz") as archive:
        for member, data in (("package/axe.min.js", script), ("package/package.json", b"{}"),
                             ("../outside.js", b"escaped")):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_the_pinned_tarball_gives_its_axe_min_js_and_nothing_else(tmp_path):
    genuine = _tarball(tmp_path, "axe-core.tgz", SCRIPT)
    destination = tmp_path / "share" / "axe-core" / "axe.min.js"
    written = axe.fetch(genuine.as_uri(), destination, axe._integrity(genuine.read_bytes()))
    assert written == destination and destination.read_bytes() == SCRIPT
    assert [path.name for path in destination.parent.iterdir()] == ["axe.min.js"]  # no temporary file left
    assert sorted(path.name for path in tmp_path.iterdir()) == ["axe-core.tgz", "share"]


def test_a_tampered_tarball_is_refused_and_nothing_is_written(tmp_path):
    pinned = axe._integrity(_tarball(tmp_path, "axe-core.tgz", SCRIPT).read_bytes())
    # A well-formed tarball with another script in it: only the integrity check can tell.
    tampered = _tarball(tmp_path, "tampered.tgz", SCRIPT.replace(b"{}", b"{steal: true}"))
    destination = tmp_path / "share" / "axe.min.js"
    with pytest.raises(axe.Unavailable) as refused:
        axe.fetch(tampered.as_uri(), destination, pinned)
    assert pinned in str(refused.value) and axe._integrity(tampered.read_bytes()) in str(refused.value)
    assert not (tmp_path / "share").exists()


def test_a_failed_download_says_where_from_and_what_to_do(tmp_path):
    missing = (tmp_path / "no-such.tgz").as_uri()
    with pytest.raises(axe.Unavailable, match="registry.npmjs.org") as failed:
        axe.fetch(missing, tmp_path / "axe.min.js", axe.INTEGRITY)
    assert missing in str(failed.value) and "scripts/browser" in str(failed.value)
    assert not (tmp_path / "axe.min.js").exists()
