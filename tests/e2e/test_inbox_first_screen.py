"""The agent workspace's first screen, kept light for its first load (docs/inbox-app.md, "The workspace at 10,000
chats"), in a real browser (Debian's Chromium through Playwright) against the service in this test's process:

- a chat opens with its newest messages (`chat_view.THREAD_SIZE`), at its end;
- "Earlier messages", by keyboard, brings the earlier ones in below it without a page load, keeps the focus, says
  so to a screen reader, and what came stays through a live update and an action's answer; once all are shown the
  control goes and the thread has the focus;
- the page's script writes no time with Intl on its way to DOMContentLoaded (its first use starts ICU): the service
  wrote them in the member's zone, or, before it is known, Date's own fields do;
- without JavaScript the control is a link to the page with more of them;
- axe-core on the chat with its earlier messages shown, at 1280 px and on a 390 px phone (no sideways scrolling);
  no script error.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from inbox_actors.access import accounts
from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.use_cases.chat_view import THREAD_SIZE
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
ANN = "ann@example.com"
ASHA = "919811800001"
OLDER = 95                       # with the customer's word and the bot's, more than two screens' worth


class Team:
    def __init__(self, service, number: str, total: int) -> None:
        self.url, self.simulator, self.number, self.total = service.url, service.simulator_url, number, total

    def customer_writes(self, text: str) -> None:
        answer = httpx.post(f"{self.simulator}/simulator/customers/{ASHA}/messages", verify=verified_context(),
                            json={"phone_number_id": self.number, "text": text}, timeout=10)
        assert answer.status_code == 200 and answer.json()["delivered_to_service"], answer.text


async def _team(service) -> Team:
    """Ann (admin), and Asha's chat handed to the team with OLDER messages of hers before it ("older 1" first)."""
    workspace_id, number, _, key = await scale_workspace(service.db)
    member = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email=ANN, role="admin")
    await accounts.set_member_password(service.db, member_id=member, password=PASSWORD)
    await customer_writes(service, number, ASHA, "Can I talk to a person?")

    async def queued() -> bool:
        answer = await service.client.get(f"/api/inbox/conversations/{ASHA}", headers=bearer(key))
        return answer.json().get("state") == "HANDOFF_PENDING"

    await eventually(queued)
    chat = await service.db.fetchval("SELECT id FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                     workspace_id, ASHA)
    await service.db.execute(
        "INSERT INTO messages (workspace_id, conversation_id, platform_message_id, direction, sender_type, type,"
        " text, status, sent_at) SELECT $1, $2, 'wamid.older' || n, 'inbound', 'customer', 'text', 'older ' || n,"
        " 'received', now() - interval '1 day' + n * interval '1 minute' FROM generate_series(1, $3::int) AS n",
        workspace_id, chat, OLDER)
    total = await service.db.fetchval("SELECT count(*) FROM messages WHERE conversation_id = $1", chat)
    assert 2 * THREAD_SIZE < total < 3 * THREAD_SIZE, total
    return Team(service, number, total)


def _earlier(shown: int) -> re.Pattern:
    """The address "Earlier messages" leads to without the script: the chat with `shown` of its newest messages."""
    return re.compile(rf"/app/chats/{ASHA}\?view=\w+&thread={shown}#earlier$")


# Counts each Intl.DateTimeFormat made, and how many were made by DOMContentLoaded.
_COUNT_INTL = """
window.__intl = 0;
const Made = Intl.DateTimeFormat;
Intl.DateTimeFormat = function (...args) { window.__intl += 1; return new Made(...args); };
Intl.DateTimeFormat.supportedLocalesOf = Made.supportedLocalesOf;
document.addEventListener("DOMContentLoaded", () => { window.__intlByReady = window.__intl; });
"""


def _messages(page: Page):
    return page.locator("#messages > li.msg")


def _focused(page: Page) -> str:
    return page.evaluate("document.activeElement.id")


def _earlier_messages(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = watched_page(context, errors)
        page.add_init_script(_COUNT_INTL)
        sign_in(page, team.url, ANN, PASSWORD, then=f"/app/chats/{ASHA}")
        wait_until_live(page)
        # The first page a member opens: no zone stored yet, the times in the browser's zone without Intl, which
        # names the zone to store once the page is idle.
        assert page.evaluate("window.__intlByReady") == 0
        expect(page.locator("#settings-menu")).to_have_attribute("data-time-zone", re.compile(r"."))
        page.reload()
        wait_until_live(page)
        assert page.evaluate("[window.__intlByReady, window.__intl]") == [0, 0]
        page.evaluate("window.__stayed = true")

        # The newest messages, the thread at its end.
        expect(_messages(page)).to_have_count(THREAD_SIZE)
        expect(_messages(page).last).to_contain_text("Can I talk to a person?")
        thread = page.locator("#thread")
        page.wait_for_function("() => { const t = document.getElementById('thread');"
                               " return t.scrollHeight - t.scrollTop - t.clientHeight < 2; }")
        link = page.get_by_role("link", name="Earlier messages")
        expect(link).to_have_attribute("href", _earlier(2 * THREAD_SIZE))

        # By keyboard: the earlier ones come in below the control, which keeps the focus.
        newest_first_shown = _messages(page).first.inner_text()
        link.focus()
        page.keyboard.press("Enter")
        expect(_messages(page)).to_have_count(2 * THREAD_SIZE)
        expect(page.locator("#thread-said")).to_have_text(f"The latest {2 * THREAD_SIZE} messages are shown.")
        assert _focused(page) == "earlier-link"
        assert _messages(page).nth(THREAD_SIZE).inner_text() == newest_first_shown
        expect(thread).to_have_attribute("data-shown", str(2 * THREAD_SIZE))
        assert_accessible(page, "a chat with its earlier messages shown")
        page.screenshot(path=str(folder / "01-earlier-messages.png"))

        # A live update and an action's answer read the chat again: as many messages as were shown stay.
        team.customer_writes("Are you there?")
        expect(_messages(page).last).to_contain_text("Are you there?")
        expect(_messages(page)).to_have_count(2 * THREAD_SIZE)
        page.get_by_role("button", name="Claim").click()
        expect(page.get_by_role("status")).to_have_text("You claimed this chat.")
        page.get_by_label("Reply to Asha").fill("Here I am.")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(_messages(page).last).to_contain_text("Here I am.")
        expect(_messages(page)).to_have_count(2 * THREAD_SIZE)

        # The last of them: the control goes, the thread has the focus, the oldest message is first.
        page.get_by_role("link", name="Earlier messages").focus()
        page.keyboard.press("Enter")
        expect(_messages(page)).to_have_count(team.total + 2)
        expect(page.get_by_role("link", name="Earlier messages")).to_have_count(0)
        expect(_messages(page).first).to_contain_text("older 1")
        assert _focused(page) == "thread"
        assert page.evaluate("window.__stayed === true"), "the page was loaded again"
        assert errors == []

        # Without JavaScript the control is a link to the page with more of them.
        plain = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
        still = plain.new_page()
        sign_in(still, team.url, ANN, PASSWORD, then=f"/app/chats/{ASHA}")
        expect(_messages(still)).to_have_count(THREAD_SIZE)
        still.get_by_role("link", name="Earlier messages").click()
        expect(still).to_have_url(_earlier(2 * THREAD_SIZE))
        expect(_messages(still)).to_have_count(2 * THREAD_SIZE)
        expect(still.get_by_role("link", name="Earlier messages")).to_have_attribute("href", _earlier(3 * THREAD_SIZE))

        # On a phone: the control and the earlier messages fit the screen's width, and stay accessible.
        phone = watched_page(browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                                 has_touch=True), errors)
        sign_in(phone, team.url, ANN, PASSWORD, then=f"/app/chats/{ASHA}")
        wait_until_live(phone)
        phone.get_by_role("link", name="Earlier messages").click()
        expect(_messages(phone)).to_have_count(2 * THREAD_SIZE)
        no_sideways_scroll(phone)
        assert_accessible(phone, "a chat with its earlier messages shown, on a phone")
        phone.screenshot(path=str(folder / "02-earlier-messages-phone.png"))
        assert errors == []


async def test_a_chat_opens_with_its_newest_messages_and_earlier_ones_come_by_keyboard_or_link(service, chromium,
                                                                                                artifacts):
    team = await _team(service)
    await in_browser_thread(_earlier_messages, chromium, team, artifacts)
