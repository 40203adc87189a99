"""Mentions in internal notes (issue 38: "@mentions in a note … name members and notify them"), against the real
server:

- Over HTTP: the notes API answers a note with the members it mentions, stored with it; a name no member has, an
  id of no member, an address in the text and a suspended member stay text; a member's name holding HTML is shown
  escaped in the thread's chip and on the Mentions page; a keyed note sent twice from the composer is one note and
  one mention, told once on the mentioned member's stream (and on no one else's); the Mentions page, its count, and
  opening the chat seeing them; the members the picker offers.
- In a browser (Debian's Chromium through Playwright), two members in two browser contexts: Ann mentions Raj with
  the note box's picker, keyboard only; Raj's open screen hears it at once (a notification, a beep, the count in
  the title, the words on the page, the count on the header's Mentions link); the mention shows in the thread as
  a chip; axe on the picker open, the thread and the Mentions page.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio
from playwright.sync_api import Page, expect

from inbox_actors.access import accounts
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, sign_in, tab_to, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
PHONE = "919811800001"
ODD_NAME = '<img src=x onerror="alert(1)">Bo'


async def _member(db, workspace_id: int, name: str, email: str, role: str = "agent") -> int:
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name=name, email=email, role=role)
    await accounts.set_member_password(db, member_id=member_id, password=PASSWORD)
    return member_id


@asynccontextmanager
async def _signed_in(service, email: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as client:
        answer = await client.post("/app/sign-in", data={"email": email, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        yield client


async def _events(client: httpx.AsyncClient, found: list[tuple[str, dict]], *,
                  task_status=trio.TASK_STATUS_IGNORED) -> None:
    """The member's stream, from now, into `found` as (event, data)."""
    async with client.stream("GET", "/app/events", headers={"Accept": "text/event-stream"}, timeout=None) as stream:
        assert stream.status_code == 200
        task_status.started()
        event: dict[str, str] = {}
        async for line in stream.aiter_lines():
            if not line:
                if "id" in event:
                    found.append((event["event"], json.loads(event["data"])))
                event = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                event[name] = value


async def _until(condition) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(0.02)


def _told(heard: list[tuple[str, dict]]) -> list[dict]:
    return [data for event, data in heard if event == "chat_changed" and data.get("mentioned")]


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, html[:300]
    return found.group(1)


async def test_a_notes_mentions_are_answered_stored_escaped_and_told_once(service, db):
    workspace_id, number, admin, key = await scale_workspace(db)
    raj = await _member(db, workspace_id, "Raj Mehta", "raj@example.com")
    ann = await _member(db, workspace_id, "Ann", "ann@example.com", role="admin")
    odd = await _member(db, workspace_id, ODD_NAME, "bo@example.com")
    away = await _member(db, workspace_id, "Gus", "gus@example.com")
    await db.execute("UPDATE members SET status = 'suspended' WHERE id = $1", away)
    await customer_writes(service, number, PHONE, "Hello")
    heard_by_raj: list = []
    heard_by_ann: list = []
    async with _signed_in(service, "raj@example.com") as raj_app, _signed_in(service, "ann@example.com") as ann_app, \
            trio.open_nursery() as nursery:
        await nursery.start(_events, raj_app, heard_by_raj)
        await nursery.start(_events, ann_app, heard_by_ann)

        # Over the API: Raj by name (any case), the rest text.
        text = ("@raj mehta can you call back? Not @Nobody, not @[Boss](member:999999), not @Gus, "
                "and write to raj@example.com <b>today</b>")
        answer = await service.client.post(f"/api/inbox/conversations/{PHONE}/notes", headers=bearer(key),
                                           json={"text": text})
        assert answer.status_code == 201, answer.text
        note = answer.json()
        assert note["text"] == text and note["type"] == "note"
        assert note["mentions"] == [{"user_id": raj, "name": "Raj Mehta"}]
        stored = await db.fetch("SELECT member_id, spans, seen_at FROM note_mentions WHERE message_id = $1",
                                note["id"])
        assert [(row["member_id"], list(row["spans"]), row["seen_at"]) for row in stored] == [(raj, [0, 10], None)]
        await _until(lambda: _told(heard_by_raj))
        assert _told(heard_by_raj) == [{"phone": PHONE, "mentioned": True, "note": note["id"], "by": admin,
                                        "by_name": await db.fetchval("SELECT name FROM members WHERE id = $1",
                                                                     admin)}]
        # Ann's screen hears the note (to show it), not whom it mentions.
        await _until(lambda: any(event == "chat_changed" for event, _ in heard_by_ann))
        assert [data for event, data in heard_by_ann if event == "chat_changed"] == [{"phone": PHONE}]

        # From the composer, keyed, sent twice (a second click, a retry): one note, Ann told once.
        page = await raj_app.get("/app/inbox")  # not the chat: opening it would see Raj's mention
        form = {"csrf": _csrf(page.text), "idempotency_key": "note-key-1",
                "text": f"@[Ann](member:{ann}) and @[x](member:{odd}): <script>alert(1)</script>"}
        for _ in range(2):
            sent = await raj_app.post(f"/app/chats/{PHONE}/note", data=form)
            assert sent.status_code == 303, sent.text
        notes = await db.fetch("SELECT id FROM messages WHERE type = 'note' AND text LIKE '@[Ann]%'")
        assert len(notes) == 1
        assert await db.fetchval("SELECT count(*) FROM note_mentions WHERE message_id = $1", notes[0]["id"]) == 2
        await _until(lambda: _told(heard_by_ann))
        await trio.sleep(0.3)  # the second request's: none
        assert [told["note"] for told in _told(heard_by_ann)] == [notes[0]["id"]]
        assert len(_told(heard_by_raj)) == 1
        nursery.cancel_scope.cancel()

    async with _signed_in(service, "ann@example.com") as ann_app:
        # The thread: each mention a chip with the member's own name, escaped; the rest of the text as typed.
        thread = (await ann_app.get(f"/app/chats/{PHONE}?view=open")).text
        assert '<span class="mention">@Raj Mehta</span> can you call back? Not @Nobody, not @[Boss](member:999999)' \
            in thread
        assert "raj@example.com &lt;b&gt;today&lt;/b&gt;" in thread
        assert '<span class="mention mention-me">@Ann</span>' in thread
        assert '<span class="mention">@&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Bo</span>' in thread
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in thread
        assert "<script>alert" not in thread and "<img src=x" not in thread
        # Whom the picker offers: the active members, each with what it inserts.
        offered = (await ann_app.get("/app/mentions/members")).json()
        assert {(m["user_id"], m["insert"]) for m in offered} >= {(raj, "@Raj Mehta"), (ann, "@Ann"),
                                                                  (odd, f"@{ODD_NAME}")}
        assert away not in {m["user_id"] for m in offered}

    async with _signed_in(service, "raj@example.com") as raj_app:
        # Raj's mentions: one, not seen; the header links to them; opening the chat sees them.
        assert (await raj_app.get("/app/mentions/count")).json() == {"unseen": 1}
        listed = (await raj_app.get("/app/mentions")).text
        assert 'href="/app/mentions"' in listed and "Mentions" in listed
        assert f'id="mention-{note["id"]}"' in listed and '<span class="badge">New</span>' in listed
        assert "1 not seen yet" in listed
        assert (await raj_app.get(f"/app/chats/{PHONE}")).status_code == 200
        assert (await raj_app.get("/app/mentions/count")).json() == {"unseen": 0}
        assert "New</span>" not in (await raj_app.get("/app/mentions")).text
        assert "No mention you have not seen." in (await raj_app.get("/app/mentions?unseen=1")).text

    async with _signed_in(service, "bo@example.com") as odd_app:
        # Marked seen from the page, without a script: back to the page, which says so.
        listed = (await odd_app.get("/app/mentions")).text
        assert "Mark all as seen" in listed
        seen = await odd_app.post("/app/mentions/seen", data={"csrf": _csrf(listed)})
        assert seen.status_code == 303 and seen.headers["location"] == "/app/mentions?done=seen"
        assert (await odd_app.get("/app/mentions/count")).json() == {"unseen": 0}
        refused = await odd_app.post("/app/mentions/seen", data={"csrf": _csrf(listed), "phone": "nope"},
                                     headers={"X-Requested-With": "fetch"})
        assert refused.status_code == 404


# -- in a browser ----------------------------------------------------------------------------------------------

# Every `new Notification(...)` and every beep the page makes, recorded (as test_inbox_agent_tools.py does).
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
  window.Notification.requestPermission = (...args) => Real.requestPermission(...args);
}
const realOscillator = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () { window.__beeps += 1; return realOscillator.call(this); };
"""


def _until_true(page: Page, expression: str, seconds: float = 20) -> None:
    """Until `expression` is true in the page (asked from outside: the page's policy allows no eval)."""
    for _ in range(int(seconds * 20)):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"never true: {expression}")


def _focused(page: Page) -> str:
    return page.evaluate("document.activeElement.id || document.activeElement.tagName")


def _mention_in_the_browser(chromium: str, url: str, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        # Raj, with notifications allowed, watching the list.
        raj_context = browser.new_context(viewport={"width": 1280, "height": 900}, permissions=["notifications"])
        raj_context.add_init_script(_RECORD)
        raj = watched_page(raj_context, errors)
        sign_in(raj, url, "raj@example.com", PASSWORD, then="/app/inbox")
        raj.goto(f"{url}/app/inbox?view=open")
        wait_until_live(raj)
        base = raj.title()
        raj.keyboard.press("Tab")  # a key pressed: the page was used, so it may play sound

        # Ann, keyboard only: the note box, "@ra", the list, Enter.
        ann = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
        sign_in(ann, url, "ann@example.com", PASSWORD, then=f"/app/chats/{PHONE}")
        wait_until_live(ann)
        tab_to(ann, ann.locator("#note-box summary"), presses=100)
        ann.keyboard.press("Enter")
        ann.keyboard.press("Tab")
        assert _focused(ann) == "note-text"
        ann.keyboard.type("Please call back @ra")
        members = ann.get_by_role("listbox", name="Members to mention")
        expect(members).to_be_visible()
        chosen = members.get_by_role("option", selected=True)
        expect(chosen).to_have_text("Raj Mehta")
        box = ann.locator("#note-text")
        assert box.get_attribute("aria-activedescendant") == chosen.get_attribute("id")
        expect(ann.locator("#mention-said")).to_contain_text("1 member")
        assert_accessible(ann, "the note box's members to mention, open")
        ann.screenshot(path=str(folder / "01-mention-picker.png"))
        # Esc closes it and keeps what was typed; typing on opens it again; ↓ and ↑ go round.
        ann.keyboard.press("Escape")
        expect(members).to_be_hidden()
        expect(box).to_have_value("Please call back @ra")
        assert box.get_attribute("aria-activedescendant") is None
        ann.keyboard.type("j")
        expect(members.get_by_role("option", selected=True)).to_have_text("Raj Mehta")
        ann.keyboard.press("ArrowDown")
        expect(members.get_by_role("option", selected=True)).to_have_text("Raj Mehta")  # the only one: round
        ann.keyboard.press("Enter")
        expect(members).to_be_hidden()
        expect(box).to_have_value("Please call back @Raj Mehta ")
        assert _focused(ann) == "note-text"
        ann.keyboard.type("today.")
        ann.keyboard.press("Control+Enter")
        expect(ann.locator("#notice .notice")).to_have_text("Note added.", timeout=20_000)
        chip = ann.locator(".msg.note .mention", has_text="@Raj Mehta")
        expect(chip).to_be_visible()
        assert_accessible(ann, "the thread with a mention")

        # Raj's screen: a notification, a beep, the count in the title, the words on the page, the header's count.
        _until_true(raj, "window.__notifications.length === 1")
        told = raj.evaluate("window.__notifications[0]")
        assert told == {"title": "You were mentioned", "body": "Ann in Asha Rao"}, told
        assert raj.evaluate("window.__beeps") == 1
        expect(raj).to_have_title(f"(1) {base}")
        toast = raj.locator("#mention-toast")
        expect(toast).to_contain_text("Ann mentioned you in a note in Asha Rao's chat.")
        badge = raj.locator(".top .sections a[href='/app/mentions'] .badge")
        expect(badge).to_have_text("(not seen: 1)")
        assert_accessible(raj, "the workspace told of a mention")
        raj.screenshot(path=str(folder / "02-mentioned.png"))

        # Raj opens the chat from the words on the page: the note, his chip standing out; the counts go.
        toast.get_by_role("link", name="Open the chat").click()
        expect(raj.get_by_role("heading", level=1)).to_contain_text("Asha Rao", timeout=15_000)
        mine = raj.locator(".msg.note .mention.mention-me")
        expect(mine).to_have_text("@Raj Mehta")
        expect(raj).to_have_title(re.compile(r"^Asha Rao"))
        expect(badge).to_have_count(0)
        expect(toast).to_be_empty()

        # The Mentions page lists it, seen.
        raj.goto(f"{url}/app/mentions")
        expect(raj.get_by_role("heading", level=1)).to_have_text("Mentions")
        expect(raj.locator(".mention-item")).to_have_count(1)
        expect(raj.locator(".mention-item .mention-me")).to_have_text("@Raj Mehta")
        assert_accessible(raj, "the Mentions page")
        raj.screenshot(path=str(folder / "03-mentions-page.png"))
        assert errors == []


async def test_a_member_mentioned_with_the_picker_is_told_on_their_open_screen(service, db, chromium, artifacts):
    workspace_id, number, _, key = await scale_workspace(db)
    await _member(db, workspace_id, "Raj Mehta", "raj@example.com")
    await _member(db, workspace_id, "Ann", "ann@example.com", role="admin")
    await customer_writes(service, number, PHONE, "Can I talk to a person?", name="Asha Rao")

    async def queued() -> bool:
        answer = await service.client.get(f"/api/inbox/conversations/{PHONE}", headers=bearer(key))
        return answer.json().get("state") == "HANDOFF_PENDING"

    await eventually(queued)
    await in_browser_thread(_mention_in_the_browser, chromium, service.url, artifacts)
