"""The agent workspace's front-end library, fetched at set-up and served by the service, never kept in the repository.

htmx (swaps server-rendered fragments), its Server-Sent Events extension (the live stream) and idiomorph's htmx
extension (a swap that keeps focus and scroll) come from the npm registry, each pinned by version and by the sha512
integrity the registry published for its tarball. `scripts/setup` runs `python -m inbox_http.web.vendor_assets`,
which downloads each tarball once, checks its integrity and keeps the one file the pages load (and a gzip of it)
under `<venv>/share/inbox-actors-vendor/<package>-<version>/`. Plain Python (urllib, tarfile, gzip): a fresh
machine has neither node nor npm.

The service serves them at `/app/static/vendor/<package>-<version>/<file>` with a year's `immutable` cache (a
new version is a new address), gzipped to a browser that takes it. Without them (set-up skipped, no network) the
pages leave the scripts out and work as plain forms; the service says once in its log how to fetch them.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import http.client
import io
import logging
import os
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from quart import Blueprint, Response, abort, request

log = logging.getLogger("inbox_http.web.vendor_assets")

# Where the fetched files live: beside the environment the service runs in, not in the source tree.
SHARE = Path(sys.prefix) / "share" / "inbox-actors-vendor"
URL_PREFIX = "/app/static/vendor"
CACHE_CONTROL = "public, max-age=31536000, immutable"
HOW_TO_FETCH = "python -m inbox_http.web.vendor_assets (scripts/setup runs it)"


@dataclass(frozen=True)
class Asset:
    """One npm package's one file the pages load, pinned by the registry's integrity of its tarball."""

    package: str
    version: str
    integrity: str
    member: str
    """The file's path inside the tarball."""

    @property
    def folder(self) -> str:
        return f"{self.package}-{self.version}"

    @property
    def name(self) -> str:
        return self.member.rsplit("/", 1)[-1]

    @property
    def tarball(self) -> str:
        base = self.package.rsplit("/", 1)[-1]
        return f"https://registry.npmjs.org/{self.package}/-/{base}-{self.version}.tgz"

    @property
    def path(self) -> Path:
        return SHARE / self.folder / self.name

    @property
    def url(self) -> str:
        return f"{URL_PREFIX}/{self.folder}/{self.name}"


# In the order the pages load them: the extensions define themselves on htmx.
ASSETS = (
    Asset("htmx.org", "2.0.11",
          "sha512-Thx/WtpeOQqSrqBCw/A1cwGJGg4UrVa3+sW0GmrM3p4gJgO89ecH4qtbnyzDDWFvBTqjnIMCgELTNt636dtamA==",
          "package/dist/htmx.min.js"),
    Asset("htmx-ext-sse", "2.2.4",
          "sha512-LJmxVhykyflBWgh5PvbRidcyuqMHlgfajmmzumvKctv9puvsufeH6OaejSMZTNTnEI8O2wXXn4ZZtBdpEMqmEQ==",
          "package/dist/sse.min.js"),
    # idiomorph itself and its htmx extension ("morph" swaps) in one file.
    Asset("idiomorph", "0.8.0",
          "sha512-R47JBL+6jHDQvcnbppIUtXXcxi5h6+wuCEEZXnRhUltsgzPFKzThL5PuHppP9ypJuy+7WawcY1TsSBD/iQbMhw==",
          "package/dist/idiomorph-ext.min.js"),
)
_BY_ADDRESS = {(asset.folder, asset.name): asset for asset in ASSETS}


class Unavailable(Exception):
    """A package could not be had: not reachable, or not the tarball pinned. The message says which and why."""


# -- fetching (set-up) --------------------------------------------------------------------------------------


def integrity_of(tarball: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode("ascii")


def file_in(tarball: bytes, asset: Asset) -> bytes:
    """The asset's file, read from the tarball only once its bytes are the ones pinned; nothing else is
    extracted (a member's path never reaches the file system)."""
    found = integrity_of(tarball)
    if found != asset.integrity:
        raise Unavailable(f"refused the {asset.package} {asset.version} tarball from {asset.tarball}: its integrity "
                          f"is {found}, not the {asset.integrity} pinned (a changed or damaged download; nothing "
                          "was written)")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        try:
            member = archive.extractfile(asset.member)
        except KeyError:
            member = None
        if member is None:
            raise Unavailable(f"the {asset.package} {asset.version} tarball has no regular file {asset.member}")
        return member.read()


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            return answer.read()
    except (OSError, http.client.HTTPException) as err:  # URLError, HTTPError and timeouts are OSErrors
        raise Unavailable(f"could not fetch {url} ({err}): make sure this machine reaches registry.npmjs.org "
                          "(through https_proxy if it needs a proxy) and run it again") from err


def _write_atomically(destination: Path, data: bytes) -> None:
    """A file of its own beside the destination, renamed over it: a service reading it sees all or nothing."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.")
    try:
        os.fchmod(handle, 0o644)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, destination)
    finally:
        Path(temporary).unlink(missing_ok=True)


def fetch(asset: Asset, url: str | None = None) -> Path:
    """Download the asset's tarball (from the registry, or `url`), check it, and keep its file and a gzip of it
    (mtime 0: the same bytes each time)."""
    data = file_in(_download(url or asset.tarball), asset)
    _write_atomically(asset.path.with_name(asset.name + ".gz"), gzip.compress(data, 9, mtime=0))
    _write_atomically(asset.path, data)
    return asset.path


def missing() -> list[Asset]:
    return [asset for asset in ASSETS if not asset.path.is_file()]


def main() -> int:
    """For scripts/setup: fetch what is not here yet; on failure say why and what it costs."""
    for asset in missing():
        print(f"fetching {asset.package} {asset.version} for the agent inbox ({asset.tarball})", file=sys.stderr)
        try:
            fetch(asset)
        except Unavailable as err:
            print(f"{str(err)[0].upper()}{str(err)[1:]}. Without it the agent inbox works as plain forms, with "
                  "no live updates.", file=sys.stderr)
            return 1
    return 0


# -- serving ------------------------------------------------------------------------------------------------

blueprint = Blueprint("web_vendor", __name__)


@blueprint.get(f"{URL_PREFIX}/<folder>/<name>")
async def vendored(folder: str, name: str):
    asset = _BY_ADDRESS.get((folder, name))
    if asset is None or not asset.path.is_file():
        abort(404)
    zipped = "gzip" in request.headers.get("Accept-Encoding", "") and asset.path.with_name(name + ".gz").is_file()
    response = Response(_read(asset.path.with_name(name + ".gz") if zipped else asset.path),
                        content_type="text/javascript; charset=utf-8")
    response.headers["Cache-Control"] = CACHE_CONTROL
    response.headers["Vary"] = "Accept-Encoding"
    if zipped:
        response.headers["Content-Encoding"] = "gzip"
    return response


@functools.lru_cache(maxsize=2 * len(ASSETS))
def _read(path: Path) -> bytes:
    return path.read_bytes()


_told = False


def script_urls() -> list[str]:
    """The addresses the workspace page loads, in order; none (plain forms) while any file is missing, which the
    log says once."""
    global _told
    absent = missing()
    if not absent:
        return [asset.url for asset in ASSETS]
    if not _told:
        _told = True
        log.warning("the agent inbox's front-end library is not fetched (%s missing under %s): its pages work as "
                    "plain forms, with no live updates, until it is; fetch it with %s",
                    ", ".join(f"{a.package} {a.version}" for a in absent), SHARE, HOW_TO_FETCH)
    return []


if __name__ == "__main__":
    sys.exit(main())
