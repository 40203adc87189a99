"""What the agent inbox's browser tests share: signing in, waiting for the live stream, the phone-screen check."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, expect, sync_playwright


def sign_in(page: Page, url: str, email: str, password: str, *, then: str = "/app/inbox") -> None:
    """Sign in through the form a protected page redirects to, and land on `then`."""
    page.goto(f"{url}{then}")
    expect(page).to_have_url(f"{url}/app/sign-in?next={then}")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{url}{then}")


def wait_until_live(page: Page) -> None:
    """Until the page's event stream is open: what it hears from then on reaches the screen."""
    page.wait_for_selector("body[data-live-connected=true]", state="attached", timeout=10_000)


def no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("() => ({page: document.documentElement.scrollWidth, view: window.innerWidth})")
    assert widths["page"] <= widths["view"], f"the page scrolls sideways: {widths}"


def tab_to(page: Page, target, presses: int = 60) -> None:
    """Press Tab until `target` (a locator) has the focus, as a keyboard-only member moves through a page."""
    for _ in range(presses):
        if target.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target} never took the focus in {presses} presses of Tab")


@contextmanager
def chromium_browser(chromium: str) -> Iterator[Browser]:
    """The Chromium the web pages' tests drive (`tests/browser.py` finds it), closed however the test ends."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            yield browser
        finally:
            browser.close()


def watched_page(opener, errors: list[str], **options) -> Page:
    """A new page of a browser or a context, whose script errors are collected in `errors` (a test ends by
    asserting there were none)."""
    page = opener.new_page(**options)
    page.on("pageerror", lambda err: errors.append(str(err)))
    return page
