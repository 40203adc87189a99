"""The browser the web pages' tests drive: Debian's Chromium (or another Chromium) through Playwright.

A browser test never skips itself for want of a browser: `scripts/test` installs one first (Debian's `chromium`
under root, Playwright's own elsewhere where it can be fetched), and a run that still has none fails with the
way to get one. Skipping is on purpose only: `INBOX_SKIP_BROWSER_TESTS=1`, which the run's summary names.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import shutil
from pathlib import Path

import pytest
import trio

SKIP_SETTING = "INBOX_SKIP_BROWSER_TESTS"

HOW_TO_GET_ONE = (
    "the browser tests need Chromium and none was found: install Debian's package (`sudo apt-get install "
    "chromium`; scripts/test does it when run as root), or Playwright's own (`.venv/bin/python -m playwright "
    "install chromium`), or point INBOX_TEST_CHROMIUM at a Chromium binary; to run without them on purpose, set "
    f"{SKIP_SETTING}=1")


def skipping_on_purpose() -> bool:
    return os.environ.get(SKIP_SETTING, "") not in ("", "0")


def find_chromium() -> str | None:
    """INBOX_TEST_CHROMIUM, else a Chromium on PATH, else the newest one Playwright downloaded."""
    chosen = os.environ.get("INBOX_TEST_CHROMIUM")
    if chosen:
        return chosen
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    builds = sorted(cache.glob("chromium-*/chrome-linux*/chrome"), key=lambda path: path.parent.parent.name)
    return str(builds[-1]) if builds else None


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium binary to launch; the test fails (or, on purpose, skips) without one."""
    if skipping_on_purpose():
        pytest.skip(f"browser tests skipped on purpose ({SKIP_SETTING} is set)")
    found = find_chromium()
    if found is None:
        pytest.fail(HOW_TO_GET_ONE, pytrace=False)
    return found


@pytest.fixture
def artifacts(tmp_path: Path, request) -> Path:
    """Where a browser test saves its screenshots: INBOX_TEST_ARTIFACTS/<test>, else the test's temporary
    directory. The path is printed (`-s` shows it)."""
    base = os.environ.get("INBOX_TEST_ARTIFACTS")
    folder = Path(base) / request.node.name if base else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of {request.node.name}: {folder}")
    return folder


async def in_browser_thread(browse, *args):
    """Playwright's sync API in a worker thread with plain asyncio: outside this test's context (the copy a thread
    gets carries trio-asyncio's running loop) and under asyncio's own loop policy for that thread only
    (trio-asyncio makes `asyncio.new_event_loop()` build its loops unless a thread sets a policy). What `browse`
    returns is the answer."""

    def with_asyncio():
        asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
        try:
            return browse(*args)
        finally:
            asyncio.set_event_loop_policy(None)

    return await trio.to_thread.run_sync(contextvars.Context().run, with_asyncio)
