"""The page one agent of a working hour drives (harness/working_agent.py): a member's own browser context under
emulated network latency (the DevTools protocol's `Network.emulateNetworkConditions`), its focus watched, its
forms sent and waited for, and what the page itself reported (script errors, Content-Security-Policy reports,
requests made). Only the workspace's stable ids and roles are used.

Focus is watched from inside the page (`WATCH`, an init script, so every page load has it): while the agent
types in a box, or reads with the focus on a link it moved to (`hold`), any swap of a part, or the focus leaving
that element, that leaves the focus elsewhere is recorded, with how long before it the last live event came. The
agent does nothing else meanwhile, so such a change is never of its own making.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from playwright.async_api import Browser, Page
from playwright.async_api import Error as PlaywrightError

WATCH = """(() => {
  const w = window.__watch = {holding: null, bouts: 0, live: 0, swaps: 0, lost: []};
  let lastLive = -1e9;
  document.addEventListener("htmx:sseMessage", () => {
    lastLive = performance.now();
    if (w.holding) w.live += 1;
  });
  const check = (cause) => {
    if (!w.holding) return;
    const active = document.activeElement;
    if (active && active.id === w.holding) return;
    w.lost.push({cause: cause, holding: w.holding, to: active ? (active.id || active.tagName) : null,
                 gone: !document.getElementById(w.holding), ms_since_live: Math.round(performance.now() - lastLive)});
  };
  ["htmx:afterSettle", "htmx:oobAfterSwap"].forEach((name) => document.addEventListener(name, () => {
    if (!w.holding) return;
    w.swaps += 1;
    check(name);
  }));
  document.addEventListener("focusout", (event) => {
    if (w.holding && event.target && event.target.id === w.holding) setTimeout(() => check("focusout"), 0);
  }, true);
})();"""
HOLD = "id => { window.__watch.holding = id; window.__watch.bouts += 1; }"
RELEASE = """id => { window.__watch.holding = null; const held = document.getElementById(id);
  const active = document.activeElement;
  return {value: held && 'value' in held ? held.value : null,
          active: active ? (active.id || active.tagName) : null}; }"""
TAKE_WATCH = ("() => { const w = window.__watch; const taken = {bouts: w.bouts, live: w.live, swaps: w.swaps, "
              "lost: w.lost}; w.bouts = 0; w.live = 0; w.swaps = 0; w.lost = []; return taken; }")
IN_FLIGHT = "() => !!document.querySelector('form.htmx-request')"
BLUR = "() => { if (document.activeElement) document.activeElement.blur(); }"
HELD_BY = """name => { const head = document.getElementById('chat-head');
  const state = head && head.querySelector('.state');
  return !!state && state.textContent.trim() === 'With a person' &&
    Array.from(head.querySelectorAll('.meta span')).some((s) => s.textContent.trim() === '· ' + name); }"""
OPEN_PHONE = "() => { const p = document.getElementById('chat-pane'); return p && p.dataset.phone || null; }"


class AgentPage:
    """A signed-in member's page, and what was seen on it."""

    def __init__(self, url: str, rng: random.Random) -> None:
        self.url, self.rng = url, rng
        self.page: Page | None = None
        self.typing: list[str] = []            # typing that left a box otherwise than typed, or the focus elsewhere
        self.watched: Counter = Counter()      # bouts held, live events and swaps meanwhile
        self.focus_lost: list[dict] = []
        self.errors: list[str] = []
        self.slow: list[str] = []              # waits that ran out (said among the stumbles)
        self.requests = 0

    async def sign_in(self, browser: Browser, email: str, password: str, latency_ms: int) -> None:
        """Signed in, under latency, with the live stream open, on the queue."""
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        page = self.page = await context.new_page()
        page.set_default_timeout(20_000)
        page.set_default_navigation_timeout(60_000)
        page.on("pageerror", lambda err: self.errors.append(f"script error: {err}"))
        page.on("console", lambda message: self.errors.append(message.text)
                if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text else None)
        page.on("request", lambda request: setattr(self, "requests", self.requests + 1))
        await page.add_init_script(WATCH)
        latency = await context.new_cdp_session(page)
        await latency.send("Network.enable")
        await latency.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1})
        await page.goto(f"{self.url}/app/inbox?view=queue")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(password)
        await page.get_by_role("button", name="Sign in").click(timeout=60_000)   # a password's check: 0.2 s of CPU
        await page.wait_for_url(f"{self.url}/app/inbox?view=queue")
        await self.live()

    async def live(self) -> None:
        await self.page.wait_for_selector("body[data-live-connected=true]", state="attached", timeout=30_000)

    async def go_to(self, path: str) -> None:
        """A page load (what the watcher saw on the last one kept first)."""
        await self.settle()
        await self.take_watch()
        await self.page.goto(f"{self.url}{path}")
        await self.live()

    # -- the list and the chat -----------------------------------------------------------------------------------

    async def show_view(self, view: str) -> None:
        if await self.page.locator(f"#view-{view}[aria-current=page]").count():
            return
        await self.page.click(f"#view-{view}")
        await self.page.wait_for_selector(f"#view-{view}[aria-current=page]")

    async def search(self, words: str) -> None:
        """The search box's answer in the list (the pane it replaces marked first: a link clicked in the old one
        meanwhile would be gone)."""
        await self.page.evaluate("() => { document.getElementById('list-pane').dataset.old = 'true'; }")
        await self.page.fill("#q", words)
        await self.page.press("#q", "Enter")
        await self.page.wait_for_selector("#list-pane:not([data-old])")

    async def rows(self) -> list[str]:
        return await self.page.eval_on_selector_all("#list-body .chat-row a[id^=link-]",
                                                    "links => links.map((a) => a.id.slice(5))")

    async def open_phone(self) -> str | None:
        return await self.page.evaluate(OPEN_PHONE)

    async def open_chat(self, phone: str) -> None:
        if await self.open_phone() == phone:
            return
        await self.page.click(f"#link-{phone}")
        await self.shows(phone)

    async def shows(self, phone: str) -> None:
        await self.page.wait_for_selector(f"#chat-pane[data-phone='{phone}'] #chat-title")

    async def holds_open_chat(self, name: str) -> bool:
        """Whether the chat open is with a person, `name` (as its head says)."""
        return await self.page.evaluate(HELD_BY, name)

    async def has(self, selector: str) -> bool:
        return bool(await self.page.locator(selector).count())

    async def open_box(self, details: str) -> None:
        """A <details> of the chat's head or composer opened (left as it is when open)."""
        if not await self.page.locator(details).evaluate("d => d.open"):
            await self.page.click(f"{details} summary")

    # -- sending -------------------------------------------------------------------------------------------------

    async def settle(self) -> None:
        """Until no form of the page is being sent (at most 20 s: longer is said)."""
        for _ in range(400):
            if not await self.page.evaluate(IN_FLIGHT):
                return
            await asyncio.sleep(0.05)
        self.slow.append("a request of the page still in flight after 20 s")

    async def submit(self, action: str, phone: str, press: Callable[[], Awaitable[None]]) -> int | None:
        """The form's answer: its status (None if none came in 30 s), once the page has taken it in."""
        path = f"/app/chats/{phone}/{action}"
        try:
            async with self.page.expect_response(
                    lambda r: r.request.method == "POST" and urlsplit(r.url).path == path, timeout=30_000) as info:
                await press()
            status = (await info.value).status
        except PlaywrightError:
            status = None
        await self.settle()
        return status

    async def press_key(self, key: str) -> None:
        """A shortcut's key, with the focus on the page itself (where shortcuts act)."""
        await self.page.evaluate(BLUR)
        await self.page.keyboard.press(key)

    async def send_by(self, how: str, button: str, box: str) -> None:
        """Send the form of `button` (its text in `#box`) as an agent might."""
        page = self.page
        if how == "click":
            await page.click(button)
            return
        if how == "Ctrl+Enter":
            await page.keyboard.press("Control+Enter")
            return
        place = await page.locator(button).bounding_box()
        x, y = place["x"] + place["width"] / 2, place["y"] + place["height"] / 2
        if how == "double-click":
            await page.mouse.dblclick(x, y)
        elif how == "two clicks 300 ms apart":
            await page.mouse.click(x, y)
            await asyncio.sleep(0.3)
            await page.mouse.click(x, y)
        else:  # a click, then Ctrl+Enter in the box at once
            await page.mouse.click(x, y)
            await page.focus(f"#{box}")
            await page.keyboard.press("Control+Enter")

    # -- the focus -----------------------------------------------------------------------------------------------

    async def hold(self, element_id: str) -> None:
        await self.page.evaluate(HOLD, element_id)

    async def release(self, element_id: str) -> dict:
        return await self.page.evaluate(RELEASE, element_id)

    async def type_into(self, box: str, text: str) -> None:
        """Types `text` into the box `#box`, emptied first, key by key, the focus watched meanwhile."""
        await self.page.fill(f"#{box}", "")
        await self.page.focus(f"#{box}")
        await self.hold(box)
        await self.page.keyboard.type(text, delay=self.rng.uniform(10, 25))
        left = await self.release(box)
        if left["value"] != text or left["active"] != box:
            self.typing.append(f"typed {text!r} into #{box}: the box holds {left['value']!r}, the focus is on "
                               f"{left['active']}")

    async def take_watch(self) -> None:
        """What the page's watcher saw since last asked (before a page load starts it anew)."""
        try:
            taken = await self.page.evaluate(TAKE_WATCH)
        except PlaywrightError:
            return
        self.watched.update({"bouts": taken["bouts"], "live": taken["live"], "swaps": taken["swaps"]})
        self.focus_lost += taken["lost"]


import os as _os  # TEMPORARY DEBUG

if _os.environ.get("WH_DEBUG"):
    import functools as _ft
    import time as _tm

    def _timed(name, fn):
        @_ft.wraps(fn)
        async def wrapper(self, *a, **k):
            s = _tm.monotonic()
            try:
                return await fn(self, *a, **k)
            finally:
                print(f"DEBUG   {name}{a[:1]} {_tm.monotonic() - s:.2f} s", flush=True)
        return wrapper

    for _n in ("show_view", "rows", "open_chat", "settle", "submit", "type_into", "open_box", "has", "press_key"):
        setattr(AgentPage, _n, _timed(_n, getattr(AgentPage, _n)))
