"""The operator page's Nodes section in a real browser (Debian's Chromium driven by Playwright), against
`inbox-actors serve --nodes 2 --demo`: both nodes with their workspaces, relays and actors per kind, then one node
killed with SIGKILL and drawn lost at the page's next reads; each state checked with axe-core (nothing serious or
critical)."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.test_ops_cluster import holder_and_other
from tests.e2e.test_serve_nodes import serve_nodes

# The survivor's data says a node is lost within 2 s of its death (test_ops_cluster.py: 0.4 s on a loaded machine);
# the page reads it every 0.5 s. The bound leaves a browser on a loaded machine time to draw it (measured 1.0 to
# 2.9 s at a load of 20 on 2 cores, 2026-11-28).
LOSS_DRAWN_WITHIN_SECONDS = 3.0


def _row(page: Page, node: str):
    return page.locator(f"#nodes tbody tr[data-node='{node}']")


def _paused(page: Page, paused: bool) -> None:
    # The section is drawn again twice a second: axe reads it paused, as the other tests of the page do.
    page.click("#pause")
    expect(page.locator("#pause")).to_have_text("Resume" if paused else "Pause")


def _browse(chromium: str, ready: dict, victim: dict, survivor: dict, folder: Path) -> None:
    workspace_id = ready["demo"]["workspace_id"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.goto(f"{survivor['url']}/ops")

            # Both nodes, alive, each with what only it knows: the survivor relayed, the victim holds the workspace.
            expect(page.locator("#nodes tbody tr[data-state='alive']")).to_have_count(2, timeout=20_000)
            here, there = _row(page, survivor["url"]), _row(page, victim["url"])
            expect(here.locator("th")).to_contain_text("(this node)")
            expect(there.locator("td[data-field=liveness_lock]")).to_have_text("held")
            expect(there.locator("td[data-field=workspaces]")).to_have_text("1", timeout=5_000)
            expect(here.locator("td[data-field=relayed]")).to_have_text(re.compile(r"^[1-9]"), timeout=5_000)
            expect(there.locator("td[data-field=taken]")).to_have_text(re.compile(r"^[1-9]"), timeout=5_000)
            expect(there.locator("td[data-field=pid]")).to_have_text(str(victim["pid"]))
            expect(page.locator("#nodes-title")).to_have_text("Nodes · 2 alive")
            page.click("#leases-title")
            lease = page.locator(f"#node-leases tbody tr[data-workspace='{workspace_id}']")
            expect(lease).to_have_attribute("data-node", victim["url"])
            epoch = int(lease.locator("td[data-field=epoch]").inner_text())
            # Actors per kind and node: the key's rate bucket lives on the workspace's node alone.
            bucket = page.locator("#node-kinds tbody tr[data-kind='key_rate_bucket']")
            expect(bucket.locator(f"td[data-node='{victim['url']}']")).to_have_text("1")
            expect(bucket.locator(f"td[data-node='{survivor['url']}']")).to_have_text("0")
            _paused(page, True)
            assert_accessible(page, "/ops with two nodes alive")
            page.screenshot(path=str(folder / "ops-nodes.png"), full_page=True)
            _paused(page, False)

            os.kill(victim["pid"], signal.SIGKILL)
            killed_ms = time.time() * 1000
            expect(there).to_have_attribute("data-state", "lost", timeout=10_000)
            drawn_after = (int(there.get_attribute("data-state-since")) - killed_ms) / 1000
            print(f"a node killed with SIGKILL drawn lost after {drawn_after:.3f} s")
            assert drawn_after <= LOSS_DRAWN_WITHIN_SECONDS
            expect(there.locator("td[data-field=state]")).to_have_text("lost (lock free)")
            expect(there.locator("td[data-field=liveness_lock]")).to_have_text("free")
            expect(there).to_have_class("bad")
            # Its workspace moves to the survivor, under the next epoch.
            expect(lease).to_have_attribute("data-node", survivor["url"], timeout=5_000)
            expect(lease.locator("td[data-field=epoch]")).to_have_text(str(epoch + 1))
            _paused(page, True)
            assert_accessible(page, "/ops with a node lost")
            page.emulate_media(color_scheme="dark")
            assert_accessible(page, "/ops with a node lost, in the dark color scheme")
            page.screenshot(path=str(folder / "ops-node-lost.png"), full_page=True)
            assert errors == []
            page.close()

            # A phone: each node a card, the page never scrolls sideways.
            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
            phone.goto(f"{survivor['url']}/ops")
            expect(phone.locator("#nodes tbody tr").first).to_be_visible(timeout=20_000)
            widths = phone.evaluate("({page: document.documentElement.scrollWidth, view: window.innerWidth})")
            assert widths["page"] <= widths["view"], widths
            phone.screenshot(path=str(folder / "ops-nodes-phone.png"), full_page=True)
            _paused(phone, True)
            assert_accessible(phone, "/ops's nodes on a phone")
        finally:
            browser.close()


@pytest.mark.slow
async def test_the_page_shows_both_nodes_and_one_killed_lost_at_once(database_url, nursery, chromium,
                                                                                 artifacts):
    async with serve_nodes(database_url, nursery) as serve:
        victim, survivor = await holder_and_other(serve.ready)
        await in_browser_thread(_browse, chromium, serve.ready, victim, survivor, artifacts)
