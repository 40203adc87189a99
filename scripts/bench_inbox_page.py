"""The agent workspace's first load at 10,000 chats, in Chromium: the service's time for the page, the browser's time to
its first paint and DOMContentLoaded, the bytes it transfers (the page, the style sheet, and its one script: htmx, its
SSE extension, idiomorph and the project's scripts), and how soon a customer's message shows on the open screen.

    .venv/bin/python scripts/bench_inbox_page.py                       # 10,000 chats, 1,000,000 messages
    .venv/bin/python scripts/bench_inbox_page.py --small --loads 3     # 500 chats: a look in a minute
    .venv/bin/python scripts/bench_inbox_page.py --database-url postgresql://user@host/postgres

1. PostgreSQL (embedded, durability off, or --database-url's server) and the workspace `scripts/bench_reporting.py`
   seeds (10,000 chats, 10,500 contacts, 1,000,000 messages over ~120 days, as the actors would have left them),
   made by running that script on the same server with `--keep --only page`: it also prints the service's times for
   the inbox's pages as it measured them before the workspace was one screen (`page: …`), for comparison. The
   database is dropped at the end.
2. The service, `inbox-actors serve` on that database (the keyword FAQ bot, the per-IP ceiling raised) with its
   built-in simulator, and a session of the workspace's first admin.
3. The service's time: `--repeat` GETs of each page over one keep-alive connection (the whole HTML), p50 / p99,
   and the service's CPU a page (the workspace with the newest chat open, as Chromium loads it below, and with the
   busiest chat open: its first screen of messages); then of each static file the workspace's page names (its style
   sheet, icon and script), with the session's cookie and gzip accepted as a browser sends them.
4. Chromium (Debian's, as the browser tests find it): `--loads` first loads of the workspace with a chat open, each
   in a fresh browser context (nothing cached), then the same page again in that context (the library cached):
   Navigation Timing's time to the first byte, DOMContentLoaded, the first paint and the load event, from the
   navigation's start, Resource Timing's bytes on the wire and unzipped and when each file came, by file, and
   Chromium's main-thread time (script, of it compiling, style and layout) as DOMContentLoaded fires
   (DevTools' Performance.getMetrics). Then `--loads` first loads more, each in a fresh context whose window was
   left `--settle` seconds first: a new context is a new window, for which Chromium starts a renderer of its own
   (its omnibox popup, chrome://omnibox-popup.top-chrome) that keeps a core busy for most of a second, over the
   page's load when the page is asked for at once; a member's first load happens in a window open long before.
5. Live: with the chat open and its stream connected, `--events` customer messages through the simulator, each to
   the open chat or to a chat further down the list in turn, timed from the simulator's call to the moment the
   text shows in the thread or in the list (a MutationObserver in the page, Date.now() on both sides).

Prints a report and one JSON line with the same figures. Exit status 0, or 1 when a step failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.figures import percentiles
from harness.options import add_database_url, script_parser
from harness.postgres import database_url, drop_database
from harness.processes import ROOT, service_child
from harness.run import run_on_postgres
from harness.working_hour import find_chromium

from inbox_actors.access import sessions
from persistence.database import Database

FIRST_LOAD_TARGET_MS = 200.0
LIVE_TARGET_MS = 1000.0
# Navigation and Resource Timing of the page just loaded, times from the navigation's start.
TIMING = """() => {
  const n = performance.getEntriesByType('navigation')[0];
  const paint = (name) => { const e = performance.getEntriesByName(name)[0]; return e ? e.startTime : null; };
  return {ttfb: n.responseStart, dom_content_loaded: n.domContentLoadedEventEnd, load: n.loadEventEnd,
          first_paint: paint('first-paint'), first_contentful_paint: paint('first-contentful-paint'),
          files: [{name: 'the page', wire: n.transferSize, body: n.encodedBodySize, unzipped: n.decodedBodySize,
                   start: n.startTime, first_byte: n.responseStart, end: n.responseEnd}]
            .concat(performance.getEntriesByType('resource').filter((r) => r.responseEnd > 0).map((r) => ({
              name: new URL(r.name).pathname, wire: r.transferSize, body: r.encodedBodySize,
              unzipped: r.decodedBodySize, start: r.startTime, first_byte: r.responseStart, end: r.responseEnd})))};
}"""
# Chromium's main thread from the page's start (DevTools' Performance.getMetrics, seconds), by kind of work.
MAIN_THREAD = {"ScriptDuration": "script", "V8CompileDuration": "compile", "RecalcStyleDuration": "style",
               "LayoutDuration": "layout", "TaskDuration": "tasks"}
# A static file the page names: its style sheet, icon and scripts (the library's included).
STATIC_FILE = re.compile(r'(?:src|href)="(/app/static/[^"]+)"')
# Resolves window.__seen[token] with Date.now() when `token` shows inside `selector`.
WATCH_FOR = """([selector, token]) => {
  window.__seen = window.__seen || {};
  const shows = () => { const e = document.querySelector(selector); return !!e && e.textContent.includes(token); };
  if (shows()) { window.__seen[token] = Date.now(); return; }
  const watcher = new MutationObserver(() => {
    if (shows()) { window.__seen[token] = Date.now(); watcher.disconnect(); }
  });
  watcher.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--small", action="store_true", help="500 chats and 20,000 messages (bench_reporting's)")
    parser.add_argument("--repeat", type=int, default=30, help="timed GETs of each page for the service's time (30)")
    parser.add_argument("--loads", type=int, default=10, help="first loads in Chromium (10), and as many settled")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds a new window is left before the settled first loads (2)")
    parser.add_argument("--events", type=int, default=10, help="customer messages timed to the screen (10)")
    parser.add_argument("--chromium", help="the Chromium to drive (default: as the browser tests find it)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    args.chromium = args.chromium or find_chromium()
    if not args.chromium:
        parser.error("no Chromium found: install Debian's chromium (scripts/browser does) or give --chromium")
    if min(args.repeat, args.loads, args.events) < 1:
        parser.error("--repeat, --loads and --events must be at least 1")
    return args


def seed(server_url: str, args: argparse.Namespace) -> str:
    """bench_reporting.py's workspace on the server, kept: its database's name. Its report is shown as it goes."""
    command = [sys.executable, str(ROOT / "scripts" / "bench_reporting.py"), "--database-url", server_url,
               "--keep", "--only", "page", "--repeat", str(args.repeat), "--explain", "0"]
    if args.small:
        command.append("--small")
    print("seeding: scripts/bench_reporting.py " + " ".join(command[4:]), flush=True)
    kept = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT) as seeding:
        for line in seeding.stdout:
            print(f"  | {line}", end="", flush=True)
            if found := re.match(r"kept database (\S+)", line.strip()):
                kept = found.group(1)
    if kept is None:
        raise RuntimeError(f"bench_reporting.py ended with {seeding.returncode} and kept no database")
    if seeding.returncode != 0:
        print("bench_reporting.py had reads that failed (above); the workspace is seeded, going on", flush=True)
    return kept


async def targets(url: str) -> dict:
    """The first admin's session, the workspace's number, the chat to open and chats to write to."""
    async with trio_asyncio.open_loop():
        db = await Database.connect(url, min_size=1, max_size=1)
        try:
            workspace = await db.fetchrow("SELECT id, phone_number_id FROM workspaces ORDER BY id LIMIT 1")
            admin = await db.fetchval("SELECT id FROM members WHERE workspace_id = $1 ORDER BY id LIMIT 1",
                                      workspace["id"])
            session, _ = await sessions.create_session(db, member_id=admin, hours=2)
            recent = [row["phone"] for row in await db.fetch(
                "SELECT phone FROM conversations WHERE workspace_id = $1 AND resolved_at IS NULL"
                " ORDER BY last_activity_at DESC LIMIT 40", workspace["id"])]
            busiest = await db.fetchrow("SELECT phone, count_messages FROM conversations WHERE workspace_id = $1"
                                        " ORDER BY count_messages DESC, id LIMIT 1", workspace["id"])
            chats = await db.fetchval("SELECT count(*) FROM conversations WHERE workspace_id = $1", workspace["id"])
        finally:
            await db.close()
    # The chat open is among the newest; the others written to sit further down the list.
    return {"session": session, "number": workspace["phone_number_id"], "open": recent[0], "others": recent[20:],
            "chats": chats, "busiest": busiest["phone"], "busiest_messages": busiest["count_messages"]}


async def service_times(base: str, session: str, pages: dict[str, str], repeat: int, cpu) -> dict:
    figures = {}
    async with httpx.AsyncClient(base_url=base, cookies={"inbox_session": session}, timeout=60) as client:
        for name, path in pages.items():
            times, answer, cpu_ms = await _timed_gets(client, path, repeat, cpu)
            figures[name] = {**percentiles(times), "bytes": len(answer.content),
                             "service_cpu_ms": round(cpu_ms, 1) if cpu_ms is not None else None}
    return figures


async def static_times(base: str, session: str, page: str, repeat: int, cpu) -> dict:
    """The service's time for each static file `page` names, fetched as a browser does: the session's cookie
    (their path is under the cookie's) and gzip accepted; `bytes` is the body as sent."""
    figures = {}
    async with httpx.AsyncClient(base_url=base, cookies={"inbox_session": session}, timeout=60,
                                 headers={"Accept-Encoding": "gzip, deflate"}) as client:
        html = (await client.get(page)).raise_for_status().text
        for path in dict.fromkeys(STATIC_FILE.findall(html)):
            times, answer, cpu_ms = await _timed_gets(client, path, repeat, cpu)
            figures[path] = {**percentiles(times), "bytes": answer.num_bytes_downloaded,
                             "encoding": answer.headers.get("content-encoding"),
                             "cache_control": answer.headers.get("cache-control"),
                             "service_cpu_ms": round(cpu_ms, 2) if cpu_ms is not None else None}
    return figures


async def _timed_gets(client: httpx.AsyncClient, path: str, repeat: int, cpu) -> tuple[list[float], httpx.Response,
                                                                                      float | None]:
    """`repeat` GETs of `path` after 3 to warm up: each one's time, the last answer, and the service's CPU a GET in
    ms (None when the service's CPU cannot be read)."""
    for _ in range(3):
        (await client.get(path)).raise_for_status()
    times, before = [], cpu()
    for _ in range(repeat):
        started = time.perf_counter()
        answer = await client.get(path)
        times.append(time.perf_counter() - started)
        answer.raise_for_status()
    spent = cpu()
    return times, answer, (spent - before) / repeat * 1e3 if spent and before else None


def _sum(files: list[dict], key: str) -> int:
    return sum(f[key] for f in files)


def browser_figures(chromium: str, base: str, t: dict, loads: int, events: int, settle: float) -> dict:
    """First loads (cold, then warm), first loads in a settled window, and live events in Chromium, with
    Playwright's sync API in this thread."""
    from playwright.sync_api import sync_playwright

    page_url = f"{base}/app/chats/{t['open']}?view=open"
    cookie = {"name": "inbox_session", "value": t["session"], "domain": "127.0.0.1", "path": "/app",
              "httpOnly": True, "sameSite": "Lax"}
    cold, warm, settled = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            for _ in range(loads):
                context, page, devtools = _new_window(browser, cookie)
                for kept in (cold, warm):
                    kept.append(_load(page, devtools, page_url))
                context.close()
            for _ in range(loads):
                context, page, devtools = _new_window(browser, cookie)
                page.wait_for_timeout(settle * 1e3)                 # the new window's own start-up done
                settled.append(_load(page, devtools, page_url))
                context.close()
            live = _live(browser, cookie, page_url, base, t, events)
        finally:
            browser.close()
    return {"cold": cold, "warm": warm, "settled": settled, "live": live}


def _new_window(browser, cookie: dict):
    """A browser context of its own (nothing cached) with the session's cookie, its page and a DevTools session on
    it that counts the main thread's work."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([cookie])
    page = context.new_page()
    devtools = context.new_cdp_session(page)
    devtools.send("Performance.enable")
    return context, page, devtools


def _load(page, devtools, page_url: str) -> dict:
    """One load of the page: its timings, and the main thread's work as DOMContentLoaded fires (the figures count
    from the document's start: a load is a new document)."""
    page.goto(page_url, wait_until="domcontentloaded")
    metrics = {m["name"]: m["value"] for m in devtools.send("Performance.getMetrics")["metrics"]}
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)                                  # late resources (the canned list, images) listed
    timing = page.evaluate(TIMING)
    timing["main_thread"] = {label: round(metrics.get(name, 0.0) * 1e3, 1) for name, label in MAIN_THREAD.items()}
    return timing


def _live(browser, cookie: dict, page_url: str, base: str, t: dict, events: int) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([cookie])
    page = context.new_page()
    page.goto(page_url)
    page.wait_for_selector("body[data-live-connected=true]", state="attached", timeout=30_000)
    simulator = httpx.Client(base_url=t["platform"], timeout=30)
    thread, listed, missed = [], [], 0
    for n in range(events):
        phone = t["open"] if n % 2 == 0 else t["others"][(n // 2) % len(t["others"])]
        token = f"bench-live-{n}-{time.time_ns() % 10**9}"
        watched = ["#thread", token] if phone == t["open"] else [f"#row-{phone}", token]
        page.evaluate(WATCH_FOR, watched)
        sent_at = time.time() * 1e3
        answer = simulator.post(f"/simulator/customers/{phone}/messages",
                                json={"phone_number_id": t["number"], "text": f"Any news? {token}"})
        answer.raise_for_status()
        seen = None
        for _ in range(100):                                     # up to 5 s
            seen = page.evaluate("token => (window.__seen || {})[token] || null", token)
            if seen:
                break
            page.wait_for_timeout(50)
        if seen is None:
            missed += 1
        else:
            (thread if phone == t["open"] else listed).append((seen - sent_at) / 1e3)
        page.wait_for_timeout(300)
    simulator.close()
    context.close()
    return {"open_chat_thread": percentiles(thread), "list_row": percentiles(listed), "missed": missed}


async def run(args: argparse.Namespace, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    name = await trio.to_thread.run_sync(seed, server_url, args)
    try:
        url = database_url(server_url, name)
        t = await targets(url)
        service = service_child(url, work_dir, extra_env={"INBOX_MODEL_URL": "none"})
        async with service.running(120.0):
            base, t["platform"] = service.ready["url"], service.ready["platform"]
            pages = {"workspace, a chat open (/app/chats/{phone}?view=open)": f"/app/chats/{t['open']}?view=open",
                     f"workspace, the busiest chat open ({t['busiest_messages']:,} messages)":
                         f"/app/chats/{t['busiest']}?view=open",
                     "workspace, no chat open (/app/inbox)": "/app/inbox",
                     "the list a live event reads (/app/inbox/list?view=open)": "/app/inbox/list?view=open",
                     "the chat a live event reads (/app/chats/{phone}/live)": f"/app/chats/{t['open']}/live"}
            server = await service_times(base, t["session"], pages, args.repeat, service.cpu_seconds)
            static = await static_times(base, t["session"], pages[next(iter(pages))], args.repeat,
                                        service.cpu_seconds)
            in_browser = await trio.to_thread.run_sync(contextvars.Context().run, _with_asyncio, browser_figures,
                                                       args.chromium, base, t, args.loads, args.events,
                                                       args.settle)
    finally:
        async with trio_asyncio.open_loop():
            await drop_database(server_url, name)
    print_report(t, server, static, in_browser)
    return 0


def _with_asyncio(work, *args):
    """Playwright's sync API runs its own asyncio loop: under asyncio's own policy in this thread (trio-asyncio
    would build it otherwise), as tests/browser.py does."""
    asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
    try:
        return work(*args)
    finally:
        asyncio.set_event_loop_policy(None)


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 1) if present else None


def _load_summary(loads: list[dict]) -> dict:
    files: dict[str, list[dict]] = {}
    for load in loads:
        for f in load["files"]:
            files.setdefault(f["name"], []).append(f)
    last = loads[-1]["files"]
    return {
        "ttfb_ms": _median([load["ttfb"] for load in loads]),
        "dom_content_loaded_ms": _median([load["dom_content_loaded"] for load in loads]),
        "first_paint_ms": _median([load["first_paint"] for load in loads]),
        "first_contentful_paint_ms": _median([load["first_contentful_paint"] for load in loads]),
        "load_ms": _median([load["load"] for load in loads]),
        "dom_content_loaded_max_ms": round(max(load["dom_content_loaded"] for load in loads), 1),
        "bytes_on_wire": _sum(last, "wire"), "bytes_unzipped": _sum(last, "unzipped"),
        "files": {f["name"]: {"wire": f["wire"], "unzipped": f["unzipped"],
                              "start_ms": _median([g["start"] for g in files[f["name"]]]),
                              "first_byte_ms": _median([g["first_byte"] for g in files[f["name"]]]),
                              "end_ms": _median([g["end"] for g in files[f["name"]]])} for f in last},
        "main_thread_ms": {label: _median([load["main_thread"][label] for load in loads])
                           for label in MAIN_THREAD.values()},
    }


def print_report(t: dict, server: dict, static: dict, in_browser: dict) -> None:
    cold, warm = _load_summary(in_browser["cold"]), _load_summary(in_browser["warm"])
    settled = _load_summary(in_browser["settled"])
    print(f"\n{t['chats']:,} chats in the workspace; the chat open: {t['open']}")
    print(f"\nthe service's time, {next(iter(server.values()))['count']} GETs each (ms):")
    print(f"  {'page':<58}{'p50':>7}{'p99':>7}{'KB':>8}{'CPU ms':>8}")
    for name, f in server.items():
        print(f"  {name:<58}{f['p50']:>7.1f}{f['p99']:>7.1f}{f['bytes'] / 1e3:>8.1f}{f['service_cpu_ms'] or 0:>8.1f}")
    print(f"\nthe service's time for each static file the page names, {next(iter(static.values()))['count']} GETs "
          "each, gzip accepted (ms):")
    print(f"  {'file':<58}{'p50':>7}{'p99':>7}{'KB':>8}{'CPU ms':>8}  encoding, Cache-Control")
    for name, f in static.items():
        print(f"  {name:<58}{f['p50']:>7.1f}{f['p99']:>7.1f}{f['bytes'] / 1e3:>8.1f}{f['service_cpu_ms'] or 0:>8.2f}"
              f"  {f['encoding'] or 'identity'}, {f['cache_control'] or '-'}")
    print(f"\nChromium, {len(in_browser['cold'])} loads, medians from the navigation's start (ms):")
    for label, s in (("first load (nothing cached)", cold), ("again (cached)", warm),
                     ("first load, window settled", settled)):
        print(f"  {label:<30} first byte {s['ttfb_ms']}, first paint {s['first_paint_ms']}, first contentful "
              f"paint {s['first_contentful_paint_ms']}, DOMContentLoaded {s['dom_content_loaded_ms']} (max "
              f"{s['dom_content_loaded_max_ms']}), load {s['load_ms']}; {s['bytes_on_wire'] / 1e3:.1f} KB on the "
              f"wire, {s['bytes_unzipped'] / 1e3:.1f} KB unzipped, {len(s['files'])} files")
        print(f"  {'':<30} main thread by DOMContentLoaded: " + ", ".join(
            f"{label} {ms}" for label, ms in s["main_thread_ms"].items()))
    print("  the first load's files (KB on the wire / unzipped; ms from the navigation's start: asked, first byte, "
          "last byte):")
    for name, f in cold["files"].items():
        print(f"    {name:<62}{f['wire'] / 1e3:>8.1f}{f['unzipped'] / 1e3:>9.1f}{f['start_ms']:>9.1f}"
              f"{f['first_byte_ms']:>9.1f}{f['end_ms']:>9.1f}")
    live = in_browser["live"]
    for label, key in (("in the open chat's thread", "open_chat_thread"), ("in the list (another chat)", "list_row")):
        f = live[key]
        print(f"live: a customer's message {label}: p50 {f['p50']} ms, max {f['max']} ms ({f['count']} messages)")
    if live["missed"]:
        print(f"live: {live['missed']} messages never showed within 5 s")
    slow = cold["dom_content_loaded_ms"] or 0
    prompt = not live["missed"] and all(live[key]["max"] is None or live[key]["max"] < LIVE_TARGET_MS
                                        for key in ("open_chat_thread", "list_row"))
    print(f"\nfirst load {'under' if slow < FIRST_LOAD_TARGET_MS else 'OVER'} {FIRST_LOAD_TARGET_MS:g} ms "
          f"(DOMContentLoaded {slow} ms; {settled['dom_content_loaded_ms']} ms in a window left to settle first); "
          f"live events {'within' if prompt else 'NOT within'} {LIVE_TARGET_MS / 1e3:g} s")
    print(json.dumps({"chats": t["chats"], "service": server, "static": static, "first_load": cold,
                      "cached_load": warm, "first_load_settled": settled, "live": live}))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        return run_on_postgres("bench-inbox-page", args.database_url, run, args)
    finally:
        print(f"run: {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
