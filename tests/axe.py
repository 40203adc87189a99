"""axe-core, the accessibility check every web page's browser test runs: a violation of impact "serious" or
"critical" fails the test.

One pinned release from the npm registry, checked against the sha512 integrity the registry published for it, and
kept in `.venv/share/axe-core-<version>/axe.min.js`. `scripts/browser` fetches it before the tests run (`python -m
tests.axe`), so a run does not download it half-way; `axe_source()` fetches it only if that was skipped. Plain
Python (urllib, tarfile): a fresh machine has neither node nor npm.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.client
import io
import os
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

VERSION = "4.14.1"
# `dist.integrity` of that version in https://registry.npmjs.org/axe-core: the tarball's sha512, base64.
INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
MEMBER = "package/axe.min.js"
CACHED = Path(__file__).resolve().parents[1] / ".venv" / "share" / f"axe-core-{VERSION}" / "axe.min.js"

FAILING_IMPACTS = ("serious", "critical")
TARGETS_SHOWN = 5

# An async function: page.evaluate waits for the promise it returns and hands back its value as JSON.
_RUN = """async () => {
    const results = await axe.run(document, {resultTypes: ['violations']});
    return results.violations.map(violation => ({
        id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.length,
        targets: violation.nodes.slice(0, %d).map(node => node.target.join(' ')),
    }));
}""" % TARGETS_SHOWN


class Unavailable(Exception):
    """axe-core could not be had: not fetched, or not the tarball pinned. The message says what to do."""


def _integrity(tarball: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode("ascii")


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            return answer.read()
    except (OSError, http.client.HTTPException) as err:  # URLError, HTTPError and timeouts are OSErrors
        raise Unavailable(
            f"could not fetch axe-core {VERSION}, the browser tests' accessibility check, from {url} ({err}): make "
            f"sure this machine reaches registry.npmjs.org (through https_proxy if it needs a proxy) and run "
            f"scripts/browser again, or set INBOX_SKIP_BROWSER_TESTS=1 to run without the browser tests") from err


def _axe_min_js(tarball: bytes, url: str, integrity: str) -> bytes:
    """The one file wanted, read from the tarball only once its bytes are the ones pinned; nothing else is
    extracted (a member's path never reaches the file system)."""
    found = _integrity(tarball)
    if found != integrity:
        raise Unavailable(
            f"refused the axe-core tarball from {url}: its integrity is {found}, not the {integrity} tests/axe.py "
            f"pins (a changed or damaged download; nothing was written)")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        try:
            member = archive.extractfile(MEMBER)
        except KeyError:  # no member of that name; None: not a regular file
            member = None
        if member is None:
            raise Unavailable(f"the axe-core tarball from {url} has no regular file {MEMBER}")
        return member.read()


def _write_atomically(destination: Path, data: bytes) -> None:
    """A file of its own beside the destination, renamed over it: a reader (another pytest worker, a later run after
    one stopped half-way) sees the whole file or none."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.")
    try:
        # mkstemp makes it private (0600); it is a published file, readable by whoever runs the tests.
        os.fchmod(handle, 0o644)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, destination)
    finally:
        # Already gone after the rename; still there only if the write failed, and then it is litter.
        Path(temporary).unlink(missing_ok=True)


def fetch(url: str = TARBALL, destination: Path = CACHED, integrity: str = INTEGRITY) -> Path:
    """Downloads the tarball, checks its integrity, and writes its axe.min.js to `destination`."""
    tarball = _download(url)
    _write_atomically(destination, _axe_min_js(tarball, url, integrity))
    return destination


@functools.cache
def axe_source() -> str:
    """axe.min.js of the pinned version, fetched on first need."""
    if not CACHED.is_file():
        fetch()
    return CACHED.read_text(encoding="utf-8")


def serious_violations(page: Page) -> list[dict]:
    """The page's violations of impact serious or critical, as axe-core finds them in its document as it is now:
    each {id, impact, help, nodes (how many elements), targets (the first few elements' selectors)}."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # Not as a <script> element (page.add_script_tag): the pages' Content-Security-Policy allows no inline
        # script and refuses it. page.evaluate runs it through the DevTools protocol, which that policy does not
        # govern.
        page.evaluate(axe_source())
    return [violation for violation in page.evaluate(_RUN) if violation["impact"] in FAILING_IMPACTS]


def assert_accessible(page: Page, name: str) -> None:
    """Fails, listing them, if axe-core finds serious or critical violations on `page` (`name` says which state)."""
    found = serious_violations(page)
    assert not found, f"axe-core {VERSION} finds serious or critical violations on {name}:\n" + "\n".join(
        f"- {v['impact']} {v['id']}: {v['help']} ({v['nodes']} element{'s' * (v['nodes'] != 1)}: "
        f"{', '.join(v['targets'])}{', …' * (v['nodes'] > len(v['targets']))})" for v in found)


def main() -> int:
    """For scripts/browser: fetches axe-core unless it is already here; on failure says why and what to do."""
    if CACHED.is_file():
        return 0
    print(f"fetching axe-core {VERSION} for the browser tests' accessibility check ({TARBALL})", file=sys.stderr)
    try:
        fetch()
    except Unavailable as err:
        print(str(err)[0].upper() + str(err)[1:] + ".", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
