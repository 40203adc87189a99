"""The workspace list's filters, saved views and bulk actions (issue 38, "filters (label, assignee, state, waiting
longer than, unread), saved views per member, and bulk actions (assign, label, snooze, resolve a selection)"),
against the service in this test's process with its simulator playing the customers:

- in a real browser (Debian's Chromium through Playwright): each filter from the list's form, swapped in without a
  page load and kept in the address; a view saved, used from the view menu, deleted; chats ticked (by the keyboard
  too, and "Tick all shown"), resolved in bulk with one refused, the report per chat; axe on each new state;
- over HTTP: the saved views' and bulk actions' REST calls, a filter's broken rule on the page (400 with a
  sentence) and the forms without the script (a GET form; posts that redirect; a double submit acting once).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import expect

from inbox_actors.access import accounts
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.web_app import chromium_browser, sign_in, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
ADMIN, AGENT = "ann@example.com", "raj@example.com"
ASHA, BILAL, CHEN, DIVYA = "919811400001", "919811400002", "919811400003", "919811400004"
NAMES = {ASHA: "Asha Rao", BILAL: "Bilal", CHEN: "Chen", DIVYA: "Divya"}
BOT_STATE = "The chat is with the bot; there is nothing to resolve."


class Team:
    """Asha's chat with Ann (labelled VIP), Bilal's with Raj, Chen's waiting for a person for two hours, Divya's
    with the bot; the key of the workspace's first admin."""

    def __init__(self, service, key: str, members: dict[str, int]) -> None:
        self.url, self.key, self.members = service.url, key, members


async def _team(service) -> Team:
    workspace_id, number, _, key = await scale_workspace(service.db)
    members = {}
    for email, role in ((ADMIN, "admin"), (AGENT, "agent")):
        members[email] = await accounts.add_member(service.db, workspace_id=workspace_id,
                                                   name=email.split("@")[0].title(), email=email, role=role)
        await accounts.set_member_password(service.db, member_id=members[email], password=PASSWORD)
    api, auth = service.client, bearer(key)
    answer = await api.post("/api/bot/answers", headers=auth,
                            json={"keywords": ["hours"], "answer": "We open at nine."})
    assert answer.status_code == 201, answer.text
    for phone in (DIVYA, CHEN, BILAL, ASHA):
        text = "What are your hours?" if phone == DIVYA else "Can I talk to a person?"
        await customer_writes(service, number, phone, text, name=NAMES[phone])

    async def queued() -> bool:
        answers = [await api.get(f"/api/inbox/conversations/{phone}", headers=auth) for phone in (ASHA, BILAL, CHEN)]
        bot = await api.get(f"/api/inbox/conversations/{DIVYA}", headers=auth)
        return all(answer.json().get("state") == "HANDOFF_PENDING" for answer in answers) and \
            bot.json()["counts"]["from_bot"] == 1

    await eventually(queued)
    assert (await api.post("/api/labels", headers=auth, json={"name": "VIP", "colour": "#b45309"})).status_code == 201
    for phone, email in ((ASHA, ADMIN), (BILAL, AGENT)):
        assert (await api.post(f"/api/inbox/conversations/{phone}/claim", headers=auth)).status_code == 200
        moved = await api.post(f"/api/inbox/conversations/{phone}/transfer", headers=auth,
                               json={"to_user_id": members[email]})
        assert moved.status_code == 200, moved.text
    assert (await api.post(f"/api/inbox/conversations/{ASHA}/labels", headers=auth,
                           json={"label": "vip"})).status_code == 200
    await service.db.execute("UPDATE conversations SET waiting_since = now() - interval '2 hours',"
                             " waiting_for_person_since = now() - interval '2 hours' WHERE phone = $1", CHEN)
    return Team(service, key, members)


def _rows(page) -> list[str]:
    return [row.get_attribute("id").removeprefix("row-") for row in page.locator("#list-body .chat-row").all()]


def _apply(page, **choices: str) -> None:
    """The filter form, opened, set and applied; the list swapped in without a page load."""
    box = page.locator("#filter-box")
    if box.get_attribute("open") is None:
        box.locator("summary").click()
    for field, value in choices.items():
        control = page.locator(f"#filter-{field}")
        if field == "unread":
            control.set_checked(value == "true")
        elif field == "waiting":
            control.fill(value)
        else:
            control.select_option(value)
    wanted = {name: [value] for name, value in {**_query(page), **choices}.items() if value and name != "cursor"}
    page.get_by_role("button", name="Apply filters").click()
    _until_query(page, wanted)


def _query(page) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(page.url).query).items()}


def _until_query(page, wanted: dict[str, list[str]]) -> None:
    """Until the address is the list's with these parameters (pushed once the list is swapped in)."""
    for _ in range(200):
        if parse_qs(urlsplit(page.url).query) == wanted:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the address never became {wanted}: {page.url}")


def _list_tools(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = watched_page(context, errors)
        sign_in(page, team.url, AGENT, PASSWORD, then="/app/inbox")
        page.goto(f"{team.url}/app/inbox?view=open")
        wait_until_live(page)
        page.evaluate("window.__kept = true")  # gone if any step loads a whole page
        expect(page.locator("#list-body .chat-row")).to_have_count(4)

        # Each filter narrows the list, in the address (a bookmark, a link to share).
        _apply(page, label="VIP")
        expect(page.locator("#filter-count")).to_have_text("1 chat matches these filters in All open.")
        assert _rows(page) == [ASHA]
        assert parse_qs(urlsplit(page.url).query)["label"] == ["VIP"]
        assert_accessible(page, "the list filtered by a label, the filter form open")
        page.screenshot(path=str(folder / "01-filtered-by-label.png"))
        _apply(page, label="", assignee="me")
        expect(page.locator("#list-body .chat-row")).to_have_count(1)
        assert _rows(page) == [BILAL]
        _apply(page, assignee="", state="HANDOFF_PENDING")
        expect(page.locator("#list-body .chat-row")).to_have_count(1)
        assert _rows(page) == [CHEN]
        _apply(page, state="", waiting="60")
        expect(page.locator("#filter-count")).to_contain_text("1 chat matches")
        assert _rows(page) == [CHEN]
        # Unread is Raj's own: Asha's chat opened, it is read for him.
        page.get_by_role("link", name="Clear filters").click()
        expect(page.locator("#list-body .chat-row")).to_have_count(4)
        page.locator(f"#link-{ASHA}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Asha Rao")
        _apply(page, unread="true")
        expect(page.locator("#filter-count")).to_contain_text("3 chats match")
        assert ASHA not in _rows(page)
        # The view links keep the filters: the Queue's count and rows under them.
        page.locator("#view-queue").click()
        expect(page.locator("#view-queue")).to_have_attribute("aria-current", "page")
        assert parse_qs(urlsplit(page.url).query)["unread"] == ["true"]
        page.locator("#view-open").click()
        expect(page.locator("#view-open")).to_have_attribute("aria-current", "page")

        # Saved as a view: in the view menu, current; used again after the filters are cleared; then deleted.
        page.locator("#save-view-box summary").click()
        page.get_by_label("Save this view and its filters as").fill("Unread open")
        page.get_by_role("button", name="Save view").click()
        saved = page.get_by_role("link", name="Unread open")
        expect(saved).to_have_attribute("aria-current", "page")
        assert_accessible(page, "the view menu with a saved view")
        page.screenshot(path=str(folder / "02-saved-view.png"))
        page.get_by_role("link", name="Clear filters").click()
        expect(page.locator("#list-body .chat-row")).to_have_count(4)
        expect(saved).not_to_have_attribute("aria-current", "page")
        saved.click()
        expect(page.locator("#list-body .chat-row")).to_have_count(3)
        expect(saved).to_have_attribute("aria-current", "page")
        assert page.evaluate("window.__kept === true"), "a page was loaded while filtering"
        page.goto(f"{team.url}/app/inbox/saved-views")
        expect(page.get_by_role("heading", level=1)).to_have_text("Saved views")
        assert_accessible(page, "the saved views page")
        page.get_by_role("button", name="Delete Unread open").click()
        expect(page.get_by_role("status")).to_have_text("Saved view deleted.")
        expect(page.get_by_text("No saved views yet.")).to_be_visible()

        # Bulk: Asha's (Ann's), Chen's (queued) and Divya's (the bot's) ticked, Divya's by the keyboard; resolved.
        page.goto(f"{team.url}/app/inbox?view=open")
        wait_until_live(page)
        page.locator(f"#pick-{ASHA}").check()
        expect(page.locator("#bulk-box")).to_have_attribute("open", "")
        page.locator(f"#pick-{CHEN}").check()
        page.locator(f"#pick-{DIVYA}").focus()
        page.keyboard.press("Space")
        expect(page.locator(f"#pick-{DIVYA}")).to_be_checked()
        expect(page.locator("#bulk-count")).to_have_text("(3 ticked)")
        expect(page.get_by_label("Tick all shown")).to_have_js_property("indeterminate", True)
        assert_accessible(page, "chats ticked, the bulk box open")
        page.screenshot(path=str(folder / "03-ticked.png"))
        page.get_by_role("button", name="Resolve").click()
        report = page.locator("#bulk-report")
        expect(report.locator(".bulk-summary")).to_have_text(f"2 resolved; 1 refused: {BOT_STATE}")
        expect(report.locator("li.refused")).to_have_text(f"Divya: refused — {BOT_STATE}")
        expect(report.locator("li.done")).to_have_count(2)
        assert_accessible(page, "a bulk action's report")
        page.screenshot(path=str(folder / "04-bulk-report.png"))
        expect(page.locator(f"#row-{ASHA}")).to_have_count(0)  # resolved chats leave All open
        # Tick all shown: every row of the list, and back.
        page.locator("#bulk-box summary").click()
        select_all = page.get_by_label("Tick all shown")
        select_all.check()
        expect(page.locator("#bulk-count")).to_have_text(f"({len(_rows(page))} ticked)")
        select_all.uncheck()
        expect(page.locator("#bulk-count")).to_have_text("")
        assert errors == []


async def test_filters_saved_views_and_a_bulk_resolve_in_the_browser(service, chromium, artifacts):
    team = await _team(service)
    await in_browser_thread(_list_tools, chromium, team, artifacts)
    # The report's two resolves, once each.
    assert await service.db.fetchval("SELECT count(*) FROM assignment_events WHERE event = 'resolved'") == 2


async def test_saved_views_and_bulk_actions_over_rest(service):
    team = await _team(service)
    api, key = service.client, bearer(team.key)
    base = "/api/inbox/conversations/saved-views"
    saved = await api.post(base, headers=key, json={"name": "VIP open", "filters": {"view": "open", "label": "VIP"}})
    assert saved.status_code == 201, saved.text
    body = saved.json()
    assert set(body) == {"id", "name", "filters", "created_at", "updated_at"}
    assert body["filters"] == {"view": "open", "label": "VIP"}
    assert_stable(await api.post(base, headers=key, json={"name": "vip OPEN"}), 409, "name_taken")
    assert_stable(await api.post(base, headers=key, json={"name": "x", "filters": {"waiting": 0}}), 400,
                  "invalid_waiting")
    assert_stable(await api.post(base, headers=key, json={"name": "x", "filters": {"state": "open"}}), 400,
                  "invalid_state")
    assert_stable(await api.post(base, headers=key, json={"name": ""}), 400, "invalid_name")
    changed = await api.patch(f"{base}/{body['id']}", headers=key, json={"name": "VIPs"})
    assert changed.status_code == 200 and changed.json()["filters"]["label"] == "VIP"
    assert [v["name"] for v in (await api.get(base, headers=key)).json()["data"]] == ["VIPs"]
    # The views are the key's creator's: Raj's key lists none and deletes none of theirs.
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM members WHERE id = $1",
                                             team.members[AGENT])
    from tests import builders
    raj = bearer((await builders.key(service.db, workspace_id, team.members[AGENT], ("inbox",))).key)
    assert (await api.get(base, headers=raj)).json() == {"data": []}
    assert_stable(await api.delete(f"{base}/{body['id']}", headers=raj), 404, "not_found")
    assert (await api.delete(f"{base}/{body['id']}", headers=key)).status_code == 200

    # Bulk: a report per chat; the same key again answers the same report and acts on nothing again.
    request = {"phones": [ASHA, DIVYA], "idempotency_key": "bulk-1"}
    first = await api.post("/api/inbox/conversations/bulk/resolve", headers=key, json=request)
    assert first.status_code == 200, first.text
    report = first.json()
    assert (report["action"], report["done"], report["refused"]) == ("resolve", 1, 1)
    assert report["results"][0] == {"phone": ASHA, "done": True, "name": "Asha Rao", "state": "AI_ONLY"}
    assert report["results"][1]["code"] == "invalid_transition" and report["results"][1]["message"] == BOT_STATE
    again = await api.post("/api/inbox/conversations/bulk/resolve", headers=key, json=request)
    assert again.json() == report
    assert await service.db.fetchval("SELECT count(*) FROM assignment_events WHERE event = 'resolved'") == 1
    assert_stable(await api.post("/api/inbox/conversations/bulk/snooze", headers=key, json=request), 422,
                  "idempotency_key_reused")
    assigned = await api.post("/api/inbox/conversations/bulk/assign", headers=key,
                              json={"phones": [CHEN, "12"], "to_user_id": team.members[AGENT]})
    assert [(r["done"], r.get("code")) for r in assigned.json()["results"]] == [(True, None), (False, "not_found")]
    assert_stable(await api.post("/api/inbox/conversations/bulk/assign", headers=key,
                                 json={"phones": [CHEN], "to_user_id": 99999999}), 400, "invalid_member")
    assert_stable(await api.post("/api/inbox/conversations/bulk/label", headers=key, json={"phones": []}), 400,
                  "invalid_phones")
    labelled = await api.post("/api/inbox/conversations/bulk/label", headers=key,
                              json={"phones": [BILAL, CHEN], "label": "vip"})
    assert labelled.json()["done"] == 2
    snoozed = await api.post("/api/inbox/conversations/bulk/snooze", headers=key,
                             json={"phones": [BILAL], "for_hours": 2})
    assert snoozed.json()["done"] == 1
    assert (await api.get(f"/api/inbox/conversations/{BILAL}", headers=key)).json()["snoozed"] is True
    assert_stable(await api.post("/api/inbox/conversations/bulk/resolve", headers=raj,
                                 json={"phones": [ASHA], "colour": "red"}), 400, "invalid_body")


async def test_the_list_tools_without_script(service):
    team = await _team(service)
    async with httpx.AsyncClient(base_url=team.url, timeout=10) as raj:
        assert (await raj.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD})).status_code == 303
        # The filter form is a GET form: its fields are the address's.
        filtered = await raj.get("/app/inbox", params={"view": "open", "label": "VIP", "assignee": "",
                                                       "state": "", "waiting": "", "unread": "true"})
        assert filtered.status_code == 200
        assert f'id="row-{ASHA}"' in filtered.text and f'id="row-{BILAL}"' not in filtered.text
        assert '<option selected>VIP</option>' in filtered.text
        assert 'name="unread" value="true" checked' in filtered.text
        # A broken rule: a person's sentence above the list, which is the view unfiltered.
        broken = await raj.get("/app/inbox", params={"view": "open", "waiting": "soon"})
        assert broken.status_code == 400
        assert "waiting must be a whole number of minutes from 1 to 43,200 (30 days)." in broken.text
        assert f'id="row-{BILAL}"' in broken.text and 'value="soon"' in broken.text
        # Saving a view: a post that redirects to it.
        page = (await raj.get("/app/inbox?view=open&label=VIP")).text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        saved = await raj.post("/app/inbox/saved-views?view=open&label=VIP", data={"csrf": csrf, "name": "VIPs"})
        assert saved.status_code == 303 and saved.headers["location"] == "/app/inbox?view=open&label=VIP"
        taken = await raj.post("/app/inbox/saved-views?view=open", data={"csrf": csrf, "name": "vips"})
        assert taken.status_code == 409 and "You already have a saved view named “vips”" in taken.text
        assert 'id="saved-view-' in taken.text and 'value="vips"' in taken.text
        view_id = await service.db.fetchval("SELECT id FROM saved_views WHERE name = 'VIPs'")
        renamed = await raj.post(f"/app/inbox/saved-views/{view_id}", data={"csrf": csrf, "name": "Top"})
        assert renamed.status_code == 303
        assert ">Top</a>" in (await raj.get("/app/inbox/saved-views")).text
        # "Tick all shown" renders every box ticked; the bulk form posts, redirects, and shows its report.
        ticked = (await raj.get("/app/inbox?view=open&select=all")).text
        assert ticked.count('class="bulk-pick"') == 4 and ticked.count(" checked>") >= 4
        key = re.search(r'name="idempotency_key" value="([^"]+)"', ticked).group(1)
        form = {"csrf": csrf, "idempotency_key": key, "action": "resolve", "phone": [CHEN, DIVYA]}
        done = await raj.post("/app/inbox/bulk?view=open", data=form)
        assert done.status_code == 303 and done.headers["location"] == f"/app/inbox?view=open&bulk={key}"
        shown = (await raj.get(done.headers["location"])).text
        assert f"1 resolved; 1 refused: {BOT_STATE}" in shown and f"Divya: refused — {BOT_STATE}" in shown
        # The same form sent again (a double click, a reload): the same report, nothing done twice.
        assert (await raj.post("/app/inbox/bulk?view=open", data=form)).status_code == 303
        assert await service.db.fetchval("SELECT count(*) FROM assignment_events WHERE event = 'resolved'") == 1
        nothing = await raj.post("/app/inbox/bulk?view=open", data={"csrf": csrf, "action": "resolve"})
        assert nothing.status_code == 400 and "Tick 1 to 100 chats in the list first" in nothing.text
        nobody = await raj.post("/app/inbox/bulk?view=open", data={"csrf": csrf, "action": "assign", "phone": ASHA})
        assert nobody.status_code == 400 and "Choose the member to assign the ticked chats to." in nobody.text
        # Another member's report is not Raj's to read.
        async with httpx.AsyncClient(base_url=team.url, timeout=10) as ann:
            assert (await ann.post("/app/sign-in", data={"email": ADMIN, "password": PASSWORD})).status_code == 303
            assert "1 resolved" not in (await ann.get(f"/app/inbox?view=open&bulk={key}")).text
        deleted = await raj.post(f"/app/inbox/saved-views/{view_id}/delete", data={"csrf": csrf})
        assert deleted.status_code == 303
        assert await service.db.fetchval("SELECT count(*) FROM saved_views") == 0


async def test_the_team_filter_lists_one_teams_queue(service):
    team = await _team(service)
    api, auth = service.client, bearer(team.key)
    billing = (await api.post("/api/team/teams", headers=auth, json={"name": "Billing"})).json()
    routed = await api.post(f"/api/inbox/conversations/{CHEN}/team", headers=auth, json={"team_id": billing["id"]})
    assert routed.status_code == 200, routed.text
    async with httpx.AsyncClient(base_url=team.url, timeout=10) as ann:
        assert (await ann.post("/app/sign-in", data={"email": ADMIN, "password": PASSWORD})).status_code == 303
        queue = await ann.get("/app/inbox", params={"view": "open", "team": str(billing["id"])})
        assert queue.status_code == 200
        assert f'id="row-{CHEN}"' in queue.text and f'id="row-{ASHA}"' not in queue.text
        assert f'<option value="{billing["id"]}" selected>Billing</option>' in queue.text
        others = await ann.get("/app/inbox", params={"view": "open", "team": "none"})
        assert f'id="row-{CHEN}"' not in others.text and f'id="row-{ASHA}"' in others.text
        broken = await ann.get("/app/inbox", params={"view": "open", "team": "billing"})
        assert broken.status_code == 400
        assert "team must be a team&#39;s id, or none (chats in no team&#39;s queue)." in broken.text \
            or "team must be a team's id, or none (chats in no team's queue)." in broken.text
