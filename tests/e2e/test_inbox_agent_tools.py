"""What agents reach for all day, in a real browser (Debian's Chromium through Playwright) against the service in
this test's process, its simulator playing the customers (issue 38, "What agents reach for"):

- A canned response inserted by "/" and Enter, its placeholders filled; the keyboard shortcuts (Ctrl+Enter sends,
  j / k, c, e, /), a "j" typed in the reply box stays a j; the help overlay opens with "?", keeps the focus, closes
  with Esc and gives the focus back; axe on the list and the overlay.
- Times in the member's time zone (the browser's, stored for the next page), "waiting" counted on without the
  service; dark mode from the system's preference passing axe.
- A chat transferred to the member: a notification, a beep they can switch off, the count in the tab's title.
- Over HTTP: the canned responses' REST calls, the admin page's forms, and the composer's Insert without the
  script.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, expect

from inbox_actors.access import accounts
from tests import builders
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.web_app import chromium_browser, sign_in, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
ADMIN = "ann@example.com"
AGENT = "raj@example.com"
ASHA, BILAL = "919811300001", "919811300002"
HELLO = {"shortcut": "hello", "title": "Greeting", "text": "Hello {{first_name}}, {{agent}} here."}
NO_NAME = "919811300009"


class Team:
    """A Scale workspace with an admin (Ann) and an agent (Raj) who sign in, chats handed to the team, a canned
    response, and the key of the workspace's first admin."""

    def __init__(self, service, number: str, key: str, members: dict[str, int]) -> None:
        self.url, self.simulator, self.number, self.key, self.members = (
            service.url, service.simulator_url, number, key, members)

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=bearer(self.key), timeout=10)


async def _team(service, **chats: str) -> Team:
    workspace_id, number, _, key = await scale_workspace(service.db)
    members = {}
    for email, role in ((ADMIN, "admin"), (AGENT, "agent")):
        members[email] = await accounts.add_member(service.db, workspace_id=workspace_id,
                                                   name=email.split("@")[0].title(), email=email, role=role)
        await accounts.set_member_password(service.db, member_id=members[email], password=PASSWORD)
    for phone, name in chats.items():
        await customer_writes(service, number, phone, "Can I talk to a person?", name=name)

    async def queued() -> bool:
        answers = [await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))
                   for phone in chats]
        return all(answer.json().get("state") == "HANDOFF_PENDING" for answer in answers)

    await eventually(queued)
    added = await service.client.post("/api/inbox/canned-responses", headers=bearer(key), json=HELLO)
    assert added.status_code == 201, added.text
    return Team(service, number, key, members)


def _signed_in(browser: Browser, team: Team, email: str, then: str, errors: list[str],
               **options) -> tuple[BrowserContext, Page]:
    context = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | options))
    page = watched_page(context, errors)
    sign_in(page, team.url, email, PASSWORD, then=then)
    return context, page


def _focused(page: Page) -> str:
    return page.evaluate("document.activeElement.id || document.activeElement.tagName")


def _until(page: Page, expression: str, seconds: float = 10) -> None:
    """Until `expression` is true in the page (asked from outside it: the page's policy allows no eval, which
    Playwright's own waiting for a function would need)."""
    for _ in range(int(seconds * 20)):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"never true: {expression}")


def _on_the_page(page: Page) -> None:
    """The focus on the page itself, where a shortcut's letter acts."""
    page.evaluate("document.activeElement && document.activeElement.blur()")


# -- canned responses and keyboard shortcuts -----------------------------------------------------------------


def _canned_and_shortcuts(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, AGENT, f"/app/chats/{ASHA}", errors)
        page.goto(f"{team.url}/app/chats/{ASHA}?view=open")
        wait_until_live(page)
        at = page.url

        # c claims the open chat, from the page itself.
        _on_the_page(page)
        page.keyboard.press("c")
        expect(page.get_by_role("status")).to_have_text("You claimed this chat.")

        # "/" at the start of the reply box opens the list; Enter inserts, the names filled.
        box = page.get_by_label("Reply to Asha Rao")
        box.click()
        page.keyboard.type("/hel")
        listbox = page.get_by_role("listbox", name="Canned responses")
        expect(listbox).to_be_visible()
        option = listbox.get_by_role("option", selected=True)
        expect(option).to_contain_text("/hello")
        assert box.get_attribute("aria-activedescendant") == option.get_attribute("id")
        assert_accessible(page, "the canned responses' list open in the reply box")
        page.screenshot(path=str(folder / "01-canned-list.png"))
        page.keyboard.press("Enter")
        expect(listbox).to_be_hidden()
        expect(box).to_have_value("Hello Asha, Raj here.")
        assert box.get_attribute("aria-activedescendant") is None
        # A letter typed in the box is the letter: j, k, c, e and / take nothing from a field.
        page.keyboard.type(" Just checking: ok?")
        expect(box).to_have_value("Hello Asha, Raj here. Just checking: ok?")
        page.keyboard.type(" jkce/")
        expect(box).to_have_value("Hello Asha, Raj here. Just checking: ok? jkce/")
        assert page.url == at and _focused(page) == "reply-text"
        # Ctrl+Enter sends it.
        page.keyboard.press("Control+Enter")
        expect(page.get_by_role("status")).to_have_text("Sent.")
        expect(page.locator(".msg.from-agent", has_text="Hello Asha, Raj here.")).to_be_visible()
        expect(box).to_have_value("")

        # Insert beside Send: the chosen response at the caret, nothing sent.
        box.fill("Good morning. ")
        page.get_by_label("Canned response", exact=True).select_option(label="/hello · Greeting")
        page.get_by_role("button", name="Insert").click()
        expect(box).to_have_value("Good morning. Hello Asha, Raj here.")
        assert page.url == at
        box.fill("")

        # Ctrl+Enter in the note box adds the note.
        page.locator("summary", has_text="Internal note").click()
        page.get_by_label("A note for the team").fill("Asked about the refund")
        page.get_by_label("A note for the team").press("Control+Enter")
        expect(page.locator(".msg.note", has_text="Asked about the refund")).to_be_visible()
        expect(page.get_by_label("A note for the team")).to_be_focused()    # back in the box, for the next note

        # j and k: the next and the previous chat of the list (Asha's is the newest).
        _on_the_page(page)
        page.keyboard.press("j")
        # The next chat is fetched and swapped in: on a loaded machine that may take longer than expect's 5 s.
        expect(page.get_by_role("heading", level=1)).to_contain_text("Bilal", timeout=20_000)
        expect(page).to_have_url(re.compile(rf"/app/chats/{BILAL}"))
        assert _focused(page) == f"link-{BILAL}"
        page.keyboard.press("k")
        expect(page.get_by_role("heading", level=1)).to_contain_text("Asha", timeout=20_000)
        # / goes to the search box (and types nothing into it).
        page.keyboard.press("/")
        assert _focused(page) == "q"
        expect(page.locator("#q")).to_have_value("")
        # A modifier held is not a shortcut: Ctrl+J is the browser's.
        page.locator(f"#link-{ASHA}").focus()
        page.keyboard.press("Control+j")
        expect(page).to_have_url(re.compile(rf"/app/chats/{ASHA}"))

        # ? opens the help: a dialog with a heading that keeps the focus, Esc closes it, the focus goes back.
        page.keyboard.press("?")
        help = page.get_by_role("dialog", name="Keyboard shortcuts")
        expect(help).to_be_visible()
        assert _focused(page) == "shortcuts-close"
        for key in ("Tab", "Tab", "Shift+Tab"):
            page.keyboard.press(key)
            assert page.evaluate("document.getElementById('shortcuts-help').contains(document.activeElement)")
        page.keyboard.press("j")  # the page's shortcuts wait while the help is open
        expect(page).to_have_url(re.compile(rf"/app/chats/{ASHA}"))
        assert_accessible(page, "the keyboard shortcuts' help")
        page.screenshot(path=str(folder / "02-shortcuts-help.png"))
        page.keyboard.press("Escape")
        expect(help).to_be_hidden()
        assert _focused(page) == f"link-{ASHA}"

        # e resolves the open chat.
        _on_the_page(page)
        page.keyboard.press("e")
        expect(page.get_by_role("status")).to_have_text("The chat is resolved.")
        assert errors == []


async def test_canned_responses_and_keyboard_shortcuts(service, chromium, artifacts):
    team = await _team(service, **{BILAL: "Bilal", ASHA: "Asha Rao"})
    await in_browser_thread(_canned_and_shortcuts, chromium, team, artifacts)


# -- times and dark mode -------------------------------------------------------------------------------------


def _times_and_dark_mode(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata",
                                      color_scheme="dark")
        page = watched_page(context, errors)
        page.clock.install()
        sign_in(page, team.url, AGENT, PASSWORD, then=f"/app/chats/{ASHA}")
        wait_until_live(page)

        # The thread's times in the browser's zone, the window's end labelled with its offset.
        sent = page.locator(".msg time").first
        moment = datetime.fromisoformat(sent.get_attribute("datetime")).astimezone(ZoneInfo("Asia/Kolkata"))
        expect(sent).to_have_text(moment.strftime("%d %b %H:%M"))
        expect(page.locator(".chat-head time[data-zoned]")).to_have_text(re.compile(r" UTC\+05:30$"))
        # The browser's zone is the member's from now on: the next page is rendered in it by the service. (Chromium
        # names it by its older IANA name, which the time zone database keeps as a link.)
        kolkata = re.compile(r"^Asia/(Kolkata|Calcutta)$")
        expect(page.locator("#settings-menu")).to_have_attribute("data-time-zone", kolkata)
        with httpx.Client(base_url=team.url, timeout=10) as plain:
            assert plain.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD}).status_code == 303
            html = plain.get(f"/app/chats/{ASHA}").text
        assert f">{moment.strftime('%d %b %H:%M')}</time>" in html

        # "waiting" counts on by itself, every 30 s, from the time it began.
        waiting = page.locator(f"#row-{ASHA} time[data-waiting]")
        expect(waiting).to_have_text(re.compile(r"^\d+ s$"))
        page.clock.fast_forward("02:00")
        expect(waiting).to_have_text(re.compile(r"^2 min$"))
        expect(page.locator(f"#row-{ASHA} time[data-ago]")).to_have_text("2 min ago")

        # Dark mode: dark paper, light ink, and axe finds no contrast it cannot read.
        colours = page.evaluate("() => [getComputedStyle(document.documentElement).backgroundColor, "
                                "getComputedStyle(document.querySelector('main')).color]")
        assert colours == ["rgb(18, 22, 29)", "rgb(230, 233, 239)"], colours
        assert_accessible(page, "the workspace in dark mode")
        page.locator("#settings-menu summary").click()
        expect(page.get_by_label("Show times in")).to_have_value(kolkata)
        assert_accessible(page, "the settings menu in dark mode")
        page.screenshot(path=str(folder / "03-dark-mode.png"))
        # Another zone chosen in the menu: the times move with it at once.
        page.get_by_label("Show times in").fill("Europe/Paris")
        page.get_by_role("button", name="Save time zone").click()
        expect(page.locator("#time-zone-said")).to_have_text("Times show in Europe/Paris.")
        paris = moment.astimezone(ZoneInfo("Europe/Paris"))
        expect(sent).to_have_text(paris.strftime("%d %b %H:%M"))
        page.keyboard.press("Escape")
        page.goto(f"{team.url}/app/canned")
        expect(page.get_by_role("heading", level=1)).to_have_text("Canned responses")
        assert_accessible(page, "the canned responses' page in dark mode")
        assert errors == []


async def test_times_in_the_members_zone_count_on_and_dark_mode_reads_well(service, chromium, artifacts):
    team = await _team(service, **{ASHA: "Asha Rao"})
    await in_browser_thread(_times_and_dark_mode, chromium, team, artifacts)


# -- notifications ---------------------------------------------------------------------------------------------

# Every `new Notification(...)` and every beep the page makes, recorded.
_RECORD = """
window.__notifications = [];
window.__beeps = 0;
if (window.Notification) {
  const Real = window.Notification;
  window.Notification = function (title, options) {
    window.__notifications.push({title: title, body: (options || {}).body || ''});
    return new Real(title, options);
  };
  Object.defineProperty(window.Notification, 'permission', {get: () => Real.permission});
  window.Notification.requestPermission = (...args) => {
    window.__asked = (window.__asked || 0) + 1;
    return Real.requestPermission(...args);
  };
}
const realOscillator = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () { window.__beeps += 1; return realOscillator.call(this); };
"""


def _notified(chromium: str, team: Team, folder: Path) -> None:
    api = team.api()
    raj = team.members[AGENT]
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        # Never asked on load: the settings menu offers it.
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(_RECORD)
        unasked = watched_page(context, errors)
        sign_in(unasked, team.url, AGENT, PASSWORD, then="/app/inbox")
        unasked.locator("#settings-menu summary").click()
        expect(unasked.get_by_role("button", name="Turn on notifications")).to_be_visible()
        assert unasked.evaluate("window.__asked || 0") == 0
        assert_accessible(unasked, "the settings menu")
        context.close()

        context, page = _signed_in(browser, team, AGENT, "/app/inbox", errors, permissions=["notifications"])
        page.add_init_script(_RECORD)
        page.goto(f"{team.url}/app/inbox?view=open")
        wait_until_live(page)
        page.locator("#settings-menu summary").click()
        expect(page.locator("#notifications-said")).to_have_text("Notifications are on.")
        expect(page.get_by_role("button", name="Turn on notifications")).to_be_hidden()
        page.locator("#settings-menu summary").click()
        base = page.title()

        # Ann hands Asha's chat to Raj: a notification, a beep, the count in the title.
        assert api.post(f"/api/inbox/conversations/{ASHA}/claim").status_code == 200
        assert api.post(f"/api/inbox/conversations/{ASHA}/transfer",
                        json={"to_user_id": raj, "reason": "Speaks Hindi"}).status_code == 200
        _until(page, "window.__notifications.length === 1")
        told = page.evaluate("window.__notifications[0]")
        assert told["title"] == "Chat transferred to you"
        assert "Asha Rao" in told["body"] and "Speaks Hindi" in told["body"], told
        assert page.evaluate("window.__beeps") == 1
        expect(page).to_have_title(f"(1) {base}")
        page.screenshot(path=str(folder / "04-notified.png"))

        # The sound switched off; Bilal's chat handed over too: two waiting, no beep.
        page.locator("#settings-menu summary").click()
        page.get_by_label("A sound when a chat is handed to me").uncheck()
        page.locator("#settings-menu summary").click()
        assert api.post(f"/api/inbox/conversations/{BILAL}/claim").status_code == 200
        assert api.post(f"/api/inbox/conversations/{BILAL}/transfer", json={"to_user_id": raj}).status_code == 200
        _until(page, "window.__notifications.length === 2")
        expect(page).to_have_title(f"(2) {base}")
        assert page.evaluate("window.__beeps") == 1
        # Their own claim tells them nothing.
        assert api.post(f"/api/inbox/conversations/{ASHA}/release").status_code == 200
        page.locator(f"#link-{ASHA}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Asha")
        expect(page).to_have_title(re.compile(r"^\(1\) Asha Rao"))
        page.get_by_role("button", name="Claim").click()
        expect(page.get_by_role("status")).to_have_text("You claimed this chat.")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__notifications.length") == 2
        assert errors == []
    api.close()


async def test_a_chat_transferred_to_the_member_notifies_them_and_counts_in_the_title(service, chromium, artifacts):
    team = await _team(service, **{ASHA: "Asha Rao", BILAL: "Bilal"})
    await in_browser_thread(_notified, chromium, team, artifacts)


# -- over HTTP: the REST calls, the admin page, Insert without the script ------------------------------------


async def test_canned_responses_over_rest_the_admin_page_and_the_composer_without_script(service):
    team = await _team(service, **{ASHA: "Asha Rao"})
    await customer_writes(service, team.number, NO_NAME, "Hi", name="")
    api, key = service.client, bearer(team.key)
    base = "/api/inbox/canned-responses"
    listed = await api.get(base, headers=key)
    assert listed.status_code == 200 and [c["shortcut"] for c in listed.json()["data"]] == ["hello"]
    first = listed.json()["data"][0]
    assert set(first) == {"id", "shortcut", "title", "text", "created_by", "updated_by", "created_at", "updated_at"}
    assert_stable(await api.post(base, headers=key, json={**HELLO, "shortcut": "HELLO"}), 409, "shortcut_taken")
    assert_stable(await api.post(base, headers=key, json={**HELLO, "shortcut": "a b"}), 400, "invalid_shortcut")
    late = await api.post(base, headers=key, json={"shortcut": "late", "title": "Late order",
                                                   "text": "Sorry {{name}}, it is on its way."})
    assert late.status_code == 201, late.text
    late_id = late.json()["id"]
    changed = await api.patch(f"{base}/{late_id}", headers=key, json={"title": "Order running late"})
    assert changed.status_code == 200 and changed.json()["text"] == "Sorry {{name}}, it is on its way."
    assert_stable(await api.patch(f"{base}/{late_id}", headers=key, json={"id": 3}), 400, "invalid_body")
    assert_stable(await api.delete(f"{base}/999999", headers=key), 404, "not_found")
    # A key that may reply reads them, and changes nothing: that is a setting.
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM members WHERE id = $1", team.members[AGENT])
    reader = bearer((await builders.key(service.db, workspace_id, team.members[AGENT], ("inbox",))).key)
    assert (await api.get(base, headers=reader)).status_code == 200
    assert_stable(await api.post(base, headers=reader, json={**HELLO, "shortcut": "x"}), 403, "scope_denied")
    removed = await api.delete(f"{base}/{late_id}", headers=key)
    assert removed.status_code == 200 and removed.json()["shortcut"] == "late"

    async with httpx.AsyncClient(base_url=team.url, timeout=10) as admin, \
            httpx.AsyncClient(base_url=team.url, timeout=10) as agent:
        for client, email in ((admin, ADMIN), (agent, AGENT)):
            assert (await client.post("/app/sign-in", data={"email": email, "password": PASSWORD})).status_code == 303
        # The admin page: added by its form, a rule's sentence for a taken shortcut, changed, removed.
        page = (await admin.get("/app/canned")).text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        assert 'href="/app/canned" aria-current="page"' in page and "/hello" in page
        added = await admin.post("/app/canned", data={"csrf": csrf, "shortcut": "thanks", "title": "Thanks",
                                                      "text": "Thank you, {{name}}!\r\nAnything else?"})
        assert added.status_code == 303 and added.headers["location"] == "/app/canned?done=added"
        taken = await admin.post("/app/canned", data={"csrf": csrf, "shortcut": "Thanks", "title": "Again",
                                                      "text": "x"})
        assert taken.status_code == 409 and "already has a canned response /Thanks" in taken.text
        assert 'value="Again"' in taken.text  # what was typed is kept
        thanks = await service.db.fetchrow("SELECT id, text FROM canned_responses WHERE shortcut = 'thanks'")
        assert thanks["text"] == "Thank you, {{name}}!\nAnything else?"
        saved = await admin.post(f"/app/canned/{thanks['id']}", data={"csrf": csrf, "shortcut": "thanks",
                                                                      "title": "Thank them", "text": "Thanks!"})
        assert saved.status_code == 303
        # The agent reads them (the header's section and the composer's list) but may not change them.
        inbox = (await agent.get(f"/app/chats/{ASHA}")).text
        assert 'href="/app/canned"' in inbox and "/thanks · Thank them" in inbox
        assert 'data-fill-first-name="Asha"' in inbox and 'data-fill-agent="Raj"' in inbox
        agent_page = (await agent.get("/app/canned")).text
        assert "Add a canned response" not in agent_page and "/thanks" in agent_page
        agent_csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', inbox).group(1)
        refused = await agent.post("/app/canned", data={"csrf": agent_csrf, "shortcut": "mine", "title": "Mine",
                                                        "text": "x"})
        assert refused.status_code == 403
        assert (await agent.get("/app/canned/choices")).json()[0]["shortcut"] == "hello"
        # Without the script the composer's Insert answers the page with the text after what was typed.
        key_value = re.search(r'name="idempotency_key" value="([^"]+)"', inbox).group(1)
        hello_id = str(first["id"])
        inserted = await agent.post(f"/app/chats/{ASHA}/canned?view=open", data={
            "csrf": agent_csrf, "idempotency_key": key_value, "text": "Good morning.", "canned_id": hello_id})
        assert inserted.status_code == 200
        assert ">Good morning.\nHello Asha, Raj here.</textarea>" in inserted.text
        assert f'name="idempotency_key" value="{key_value}"' in inserted.text  # nothing sent: the same message
        unknown = await agent.post(f"/app/chats/{NO_NAME}/canned", data={
            "csrf": agent_csrf, "text": "", "canned_id": hello_id})
        assert ">Hello there, Raj here.</textarea>" in unknown.text
        removed_page = await admin.post(f"/app/canned/{thanks['id']}/delete", data={"csrf": csrf})
        assert removed_page.status_code == 303
    assert await service.db.fetchval("SELECT count(*) FROM canned_responses WHERE shortcut = 'thanks'") == 0
