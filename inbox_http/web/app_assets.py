"""The pages' own scripts, style sheet and icon, served from memory at addresses named by their content.

Computed by the service from `inbox_http/static/app/` the first time a page names them, never by a build step:
the six scripts joined into one response (`app-scripts.js`, in the order their separate `defer` tags ran), and for
the agent workspace the front-end library (`vendor_assets`, fetched at set-up) and the same six in one response
more (`workspace-scripts.js`): the workspace's first load asks for one script, not four. Each text file is gzipped
once, and each address carries a hash of what it serves (`/app/static/v/<version>/<name>`), so an answer is kept a
year (`immutable`) and a changed file is a new address. The files' sizes and times are looked at again whenever a
page names an address: an edited file is served at once, as the plain `/app/static/<file>` addresses still serve
it. A request for an address of another version (a page rendered by a node with other files, or before an edit)
gets what is here now, never to be kept: an answer kept a year must be the one its address names.
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
# The workspace's one script: the library's files, then the six inside one function (`workspace_joined`).
WORKSPACE_BUNDLE = "workspace-scripts.js"
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


def _one_after_another(paths) -> bytes:
    """The files one after another, each ending its last line: a file's closing comment never swallows the next
    file's first line."""
    parts = [path.read_bytes() for path in paths]
    return b"".join(part if part.endswith(b"\n") else part + b"\n" for part in parts)


def joined(folder: Path, names: tuple[str, ...] = SCRIPTS) -> bytes:
    """The scripts one after another."""
    return _one_after_another(folder / name for name in names)


def workspace_joined(folder: Path, library: tuple[Path, ...]) -> bytes:
    """The library's files in their order, then the six scripts inside one function: strict from its first
    statement as `joined` is (the library's own files are not all strict), their names its own."""
    return _one_after_another(library) + b"(function () {\n" + joined(folder) + b"}());\n"


def library() -> tuple[Path, ...]:
    """The front-end library's files in the order the workspace runs them; none while one is missing."""
    from inbox_http.web import vendor_assets  # see install_web_app: `python -m` runs that module as __main__

    return () if vendor_assets.missing() else tuple(asset.path for asset in vendor_assets.ASSETS)


def _asset(name: str, body: bytes) -> Asset:
    zipped = gzip.compress(body, 9, mtime=0)
    return Asset(name, body, zipped if len(zipped) < len(body) else None, hashlib.sha256(body).hexdigest()[:16])


class Assets:
    """The assets of one folder, built again when one of its files changed (size, time or the file itself)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._seen: tuple | None = None
        self._built: dict[str, Asset] = {}

    def _stamp(self, vendored: tuple[Path, ...]) -> tuple:
        paths = (*(self.folder / name for name in (*SCRIPTS, *FILES)), *vendored)
        return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in map(os.stat, paths))

    def current(self) -> dict[str, Asset]:
        vendored = library()
        stamp = self._stamp(vendored)
        if stamp != self._seen:
            built = {BUNDLE: _asset(BUNDLE, joined(self.folder))}
            if vendored:
                built[WORKSPACE_BUNDLE] = _asset(WORKSPACE_BUNDLE, workspace_joined(self.folder, vendored))
            built |= {name: _asset(name, (self.folder / name).read_bytes()) for name in FILES}
            self._built, self._seen = built, stamp
        return self._built

    def url(self, name: str) -> str:
        return self.current()[name].url


assets = Assets(FOLDER)


def asset_url(name: str) -> str:
    """For the templates: the address of `app-scripts.js`, `app.css` or `favicon.svg` as they are now."""
    return assets.url(name)


def workspace_script_url() -> str | None:
    """For the workspace's page: the address of its one script, the library and the six together; None while the
    library is not fetched (the log says so once): the page is then plain forms, with `app-scripts.js` alone."""
    from inbox_http.web import vendor_assets

    if not vendor_assets.script_urls():
        return None
    found = assets.current().get(WORKSPACE_BUNDLE)
    return found.url if found is not None else None


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
