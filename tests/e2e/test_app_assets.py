"""The pages' own files from the running service on a real socket (inbox_http/web/app_assets.py): one script of
their own (on the agent workspace, the library and theirs as one), at an address named by its content, kept a year
and gzipped to the same bytes; a changed file a new address; and in Chromium the pages run from it, then load again
without asking for any of it.
"""

from __future__ import annotations

import gzip
import re
import shutil

import httpx
from playwright.sync_api import expect

from inbox_actors.access import accounts
from inbox_http.web import app_assets, vendor_assets
from inbox_http.web.app_assets import BUNDLE, SCRIPTS, WORKSPACE_BUNDLE, Assets, library, workspace_joined
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.web_app import chromium_browser, sign_in, wait_until_live, watched_page

PASSWORD = "a-long-enough-password"
EMAIL = "ann@example.com"
YEAR = "public, max-age=31536000, immutable"


async def _member(service) -> None:
    workspace_id, *_ = await scale_workspace(service.db)
    member = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email=EMAIL, role="admin")
    await accounts.set_member_password(service.db, member_id=member, password=PASSWORD)


def _client(url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, timeout=10)


async def _sign_in(client: httpx.AsyncClient) -> None:
    assert (await client.post("/app/sign-in", data={"email": EMAIL, "password": PASSWORD})).status_code == 303


async def _raw(client: httpx.AsyncClient, url: str, encoding: str) -> httpx.Response:
    """The answer with its body as sent (httpx would unzip it): `.raw`."""
    async with client.stream("GET", url, headers={"Accept-Encoding": encoding}) as answer:
        answer.raw = b"".join([chunk async for chunk in answer.aiter_raw()])
    return answer


def _own(page: str) -> tuple[list[str], str, str]:
    """The page's scripts in their order, its style sheet and its icon."""
    scripts = re.findall(r'<script src="([^"]+)" defer></script>', page)
    return (scripts, re.search(r'<link rel="stylesheet" href="([^"]+)">', page).group(1),
            re.search(r'<link rel="icon" href="([^"]+)"', page).group(1))


async def test_one_script_of_their_own_after_the_library_kept_a_year_and_gzipped_to_its_files(service):
    await _member(service)
    files = app_assets.FOLDER
    expected = {BUNDLE: b"".join((files / name).read_bytes() for name in SCRIPTS),
                WORKSPACE_BUNDLE: workspace_joined(files, library()),
                "app.css": (files / "app.css").read_bytes(), "favicon.svg": (files / "favicon.svg").read_bytes()}
    async with _client(service.url) as client:
        before_sign_in = _own((await client.get("/app/sign-in")).text)
        await _sign_in(client)
        scripts, style, icon = _own((await client.get("/app/inbox")).text)
        # The workspace: one script, the library first and then the six, the order they ran in as seven tags.
        assert library() and scripts == [app_assets.asset_url(WORKSPACE_BUNDLE)]
        assert expected[WORKSPACE_BUNDLE].startswith(b"".join(
            asset.path.read_bytes() for asset in vendor_assets.ASSETS)[:1000])
        assert (style, icon) == (app_assets.asset_url("app.css"), app_assets.asset_url("favicon.svg"))
        # Every other page names the six alone, and the same style sheet and icon.
        assert before_sign_in == ([app_assets.asset_url(BUNDLE)], style, icon)
        for url in (scripts[-1], before_sign_in[0][0], style, icon):
            name = url.rsplit("/", 1)[-1]
            zipped = await _raw(client, url, "gzip, deflate")
            assert zipped.status_code == 200 and zipped.headers["content-encoding"] == "gzip", url
            assert gzip.decompress(zipped.raw) == expected[name], url
            plain = await _raw(client, url, "identity")
            assert plain.raw == expected[name] and "content-encoding" not in plain.headers, url
            for answer in (zipped, plain):
                assert answer.headers["cache-control"] == YEAR and answer.headers["vary"] == "Accept-Encoding"
                assert answer.headers["x-content-type-options"] == "nosniff"
            assert url == f"/app/static/v/{app_assets.Assets(files).current()[name].version}/{name}"
        assert zipped.headers["content-type"] == "image/svg+xml"
        assert (await client.get(scripts[-1])).headers["content-type"] == "text/javascript; charset=utf-8"
        assert (await client.get(style)).headers["content-type"] == "text/css; charset=utf-8"
        # The plain addresses still answer (a bookmark, a script of scripts/).
        assert (await client.get("/app/static/app.css")).content == expected["app.css"]
    # Nobody signed in, or a session that is no session: the same answer (a static file reads no session).
    for cookies in ({}, {"inbox_session": "session_" + "x" * 40}):
        async with httpx.AsyncClient(base_url=service.url, timeout=10, cookies=cookies) as anyone:
            answer = await anyone.get(scripts[-1])
            assert answer.status_code == 200 and answer.content == expected[WORKSPACE_BUNDLE]


async def test_a_changed_file_is_a_new_address_and_an_old_address_is_not_kept(service, monkeypatch, tmp_path):
    await _member(service)
    folder = tmp_path / "app"
    shutil.copytree(app_assets.FOLDER, folder)
    monkeypatch.setattr(app_assets, "assets", Assets(folder))
    async with _client(service.url) as client:
        await _sign_in(client)
        scripts, style, icon = _own((await client.get("/app/inbox")).text)
        with open(folder / "app.js", "a") as script:
            script.write("// a change\n")
        changed, style_now, icon_now = _own((await client.get("/app/inbox")).text)
        assert changed[-1] != scripts[-1] and (style_now, icon_now) == (style, icon)
        assert changed[:-1] == scripts[:-1]
        new = await client.get(changed[-1])
        assert new.headers["cache-control"] == YEAR and b"// a change\n" in new.content
        # A page rendered before the change asks for the old address: it gets what is here now, not to be kept.
        old = await client.get(scripts[-1])
        assert old.status_code == 200 and old.content == new.content
        assert old.headers["cache-control"] == "no-cache"
        assert (await client.get("/app/static/v/0123456789abcdef/nothing.js")).status_code == 404


def _pages_run_from_one_script(chromium: str, url: str) -> None:
    errors: list[str] = []
    with chromium_browser(chromium) as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = watched_page(context, errors)
        page.on("console", lambda message: errors.append(message.text)
                if "Content Security Policy" in message.text else None)
        sign_in(page, url, EMAIL, PASSWORD)
        wait_until_live(page)  # htmx, its stream extension and app.js ran
        ran = page.evaluate("""() => ({picker: typeof window.InboxPicker,
                                       availability: document.documentElement.dataset.availabilityScript})""")
        assert ran == {"picker": "function", "availability": "on"}
        scripts = page.evaluate("""() => performance.getEntriesByType('resource')
            .filter((r) => r.initiatorType === 'script').map((r) => new URL(r.name).pathname)""")
        # One script: the library and the six, in the order checked over HTTP above.
        assert scripts == [app_assets.asset_url(WORKSPACE_BUNDLE)], scripts
        # Loaded again: every static file from the cache, none asked for (no revalidation either).
        for load in (lambda: page.goto(f"{url}/app/inbox"), page.reload):
            load()
            wait_until_live(page)
            static = page.evaluate("""() => performance.getEntriesByType('resource')
                .filter((r) => new URL(r.name).pathname.startsWith('/app/static/'))
                .map((r) => [new URL(r.name).pathname, r.transferSize])""")
            assert {path for path, _ in static} >= {*scripts, app_assets.asset_url("app.css")}, static
            assert [path for path, sent in static if sent > 0] == [], static
        # The roster, whose availability the same script keeps current.
        page.goto(f"{url}/app/team")
        expect(page.locator("[data-availability-of]").first).to_be_attached()
        assert page.evaluate("document.documentElement.dataset.availabilityScript") == "on"
        context.close()
    assert errors == [], errors


async def test_the_pages_run_from_one_script_and_load_again_asking_for_no_static_file(service, chromium):
    await _member(service)
    await in_browser_thread(_pages_run_from_one_script, chromium, service.url)
