"""The pages' own scripts, style sheet and icon, served from memory at addresses named by their content.

Computed by the service from `inbox_http/static/app/` the first time a page names them, never by a build step:
the six scripts joined into one response (`app-scripts.js`, in the order their separate `defer` tags ran), each
text file gzipped once, and each address carrying a hash of what it serves (`/app/static/v/<version>/<name>`), so
an answer is kept a year (`immutable`) and a changed file is a new address. The files' sizes and times are looked
at again whenever a page names an address: an edited file is served at once, as the plain `/app/static/<file>`
addresses still serve it. A request for an address of another version (a page rendered by a node with other files,
or before an edit) gets what is here now, never to be kept: an answer kept a year must be the one its address names.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from quart import Blueprint, Response, abort, request

FOLDER = Path(__file__).resolve().parent.parent / "static" / "app"
URL_PREFIX = "/app/static/v"
BUNDLE = "app-scripts.js"
# Their order is the pages' order of execution: picker.js defines the list app.js and mentions.js open, and
# availability.js came last (its tag was in the page's body). picker.js says "use strict" before any statement, so
# the joined script is strict throughout, as each of the six was (availability.js inside its function).
SCRIPTS = ("picker.js", "app.js", "list_tools.js", "attachments.js", "mentions.js", "availability.js")
FILES = ("app.css", "favicon.svg")
CACHE_CONTROL = "public, max-age=31536000, immutable"
# Served at an address of another version: not to be kept under a name that is not its own.
NOT_KEPT = "no-cache"
CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                 ".svg": "image/svg+xml"}


@dataclass(frozen=True)
class Asset:
    name: str
    body: bytes
    gzipped: bytes | None
    """None when gzip would not make it smaller."""
    version: str

    @property
    def url(self) -> str:
        return f"{URL_PREFIX}/{self.version}/{self.name}"

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[Path(self.name).suffix]


def joined(folder: Path, names: tuple[str, ...] = SCRIPTS) -> bytes:
    """The scripts one after another, each ending its last line: a file's closing comment never swallows the
    next file's first line."""
    parts = [(folder / name).read_bytes() for name in names]
    return b"".join(part if part.endswith(b"\n") else part + b"\n" for part in parts)


def _asset(name: str, body: bytes) -> Asset:
    zipped = gzip.compress(body, 9, mtime=0)
    return Asset(name, body, zipped if len(zipped) < len(body) else None, hashlib.sha256(body).hexdigest()[:16])


class Assets:
    """The assets of one folder, built again when one of its files changed (size, time or the file itself)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._seen: tuple | None = None
        self._built: dict[str, Asset] = {}

    def _stamp(self) -> tuple:
        return tuple((s.st_ino, s.st_size, s.st_mtime_ns)
                     for s in (os.stat(self.folder / name) for name in (*SCRIPTS, *FILES)))

    def current(self) -> dict[str, Asset]:
        stamp = self._stamp()
        if stamp != self._seen:
            built = {BUNDLE: _asset(BUNDLE, joined(self.folder))}
            built |= {name: _asset(name, (self.folder / name).read_bytes()) for name in FILES}
            self._built, self._seen = built, stamp
        return self._built

    def url(self, name: str) -> str:
        return self.current()[name].url


assets = Assets(FOLDER)


def asset_url(name: str) -> str:
    """For the templates: the address of `app-scripts.js`, `app.css` or `favicon.svg` as they are now."""
    return assets.url(name)


def takes_gzip(accept_encoding: str) -> bool:
    """Whether the client takes gzip: named (or `*`) without `q=0`; gzip's own entry over `*`'s."""
    qualities = {}
    for coding in accept_encoding.split(","):
        name, *parameters = coding.split(";")
        quality = 1.0
        for parameter in parameters:
            key, _, value = parameter.strip().partition("=")
            if key.lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        qualities[name.strip().lower()] = quality
    return qualities.get("gzip", qualities.get("*", 0.0)) > 0


blueprint = Blueprint("web_app_assets", __name__)


# No session, no database, no file read: the answer is in memory (the files are only looked at, `Assets.current`).
@blueprint.get(f"{URL_PREFIX}/<version>/<name>")
async def served(version: str, name: str) -> Response:
    asset = assets.current().get(name)
    if asset is None:
        abort(404)
    zipped = asset.gzipped is not None and takes_gzip(request.headers.get("Accept-Encoding", ""))
    response = Response(asset.gzipped if zipped else asset.body, content_type=asset.content_type)
    response.headers["Cache-Control"] = CACHE_CONTROL if version == asset.version else NOT_KEPT
    response.headers["Vary"] = "Accept-Encoding"
    if zipped:
        response.headers["Content-Encoding"] = "gzip"
    return response
