"""The team report and goals (issue 39, "Goals" and "Reports you can see"): customers through the platform simulator
handed over, answered and resolved by members, the report's figures checked against what happened and against the
team's performance call, goals judged beside their figures, refusals in their own words; and the reports page in a
real browser (charts, tables, a goal set from the page, each CSV equal to the API's figures), checked with axe."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import trio
from playwright.sync_api import expect

from inbox_actors.access import accounts
from tests import builders
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
PHONES = ["919822200001", "919822200002", "919822200003"]


async def _a_worked_day(service) -> tuple[int, str, int, str]:
    """Three customers ask for a person; an agent answers two and resolves one. (workspace, admin key, the agent,
    the agent's key)."""
    workspace_id, number, _, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent", ["inbox"])
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    async with trio.open_nursery() as nursery:
        for phone in PHONES:
            nursery.start_soon(customer_writes, service, number, phone, "I want to talk to a person")
    for phone in PHONES:
        await eventually(lambda p=phone: _state(service, key, p, "HANDOFF_PENDING"))
    for phone in PHONES[:2]:
        answer = await service.client.post(f"/api/inbox/conversations/{phone}/reply", headers=bearer(agent_key),
                                           json={"message": "Hello, I am here."})
        assert answer.status_code == 200, answer.text
    resolved = await service.client.post(f"/api/inbox/conversations/{PHONES[0]}/resolve", headers=bearer(agent_key))
    assert resolved.status_code == 200, resolved.text
    return workspace_id, key, agent, agent_key


async def _state(service, key: str, phone: str, state: str) -> bool:
    return (await chat(service, key, phone))["state"] == state


async def test_the_report_counts_what_happened_and_agrees_with_the_team_performance(service):
    _, key, agent, _ = await _a_worked_day(service)

    async def replies_counted():
        found = (await service.client.get("/api/team/report?tz=Asia/Kolkata", headers=bearer(key))).json()
        return found if found["totals"]["first_human_response"]["count"] == 2 else None
    report = await eventually(replies_counted, timeout=10)
    assert report["time_zone"] == "Asia/Kolkata" and report["opened"] == 3
    assert report["totals"]["resolved"] == 1 and report["totals"]["resolution"]["count"] == 1
    assert sum(day["opened"] for day in report["by_day"]) == 3 == sum(h["opened"] for h in report["by_hour"])
    assert sum(day["resolved"] for day in report["by_day"]) == 1 and len(report["by_hour"]) == 24
    assert report["bot"]["chats"] == 3 and report["bot"]["handed_over_chats"] == 3
    assert report["bot"]["handover_percent"] == 100.0 and sum(r["count"] for r in report["bot"]["reasons"]) == 3
    [mine] = [m for m in report["members"] if m["member"]["user_id"] == agent]
    assert mine["first_human_response"]["count"] == 2 and mine["resolved"] == 1
    # The same first responses as the team's performance call counts, to the unit.
    performance = (await service.client.get("/api/team/performance", headers=bearer(key))).json()
    [theirs] = [m for m in performance["data"] if m["member"]["user_id"] == agent]
    assert theirs["first_human_response"] == {k: mine["first_human_response"][k]
                                              for k in ("count", "median_seconds", "p90_seconds")}
    assert theirs["chats_resolved"] == mine["resolved"]
    # And as the Reporting API's replies of each chat say, to its unit: its first human response is the wait's first
    # agent reply, in whole seconds (the specification's integer), where the report keeps tenths; the report's
    # median and 90th percentile are interpolated over the same replies.
    waits = sorted([(await service.client.get(f"/api/reporting/v1/conversations/{phone}/replies",
                                              headers=bearer(key))).json()["first_human_response"]["response_seconds"]
                    for phone in PHONES[:2]])
    assert report["totals"]["first_human_response"]["median_seconds"] == pytest.approx((waits[0] + waits[1]) / 2,
                                                                                       abs=1)
    assert report["totals"]["first_human_response"]["p90_seconds"] == \
        pytest.approx(waits[0] + 0.9 * (waits[1] - waits[0]), abs=1)

    for query, code in (("tz=Mars/Olympus", "invalid_tz"), ("since=yesterday", "invalid_since"),
                        ("since=2026-01-01&to=2026-06-01", "window_too_large")):
        answer = await service.client.get(f"/api/team/report?{query}", headers=bearer(key))
        assert answer.status_code == 400 and answer.json()["error"] == code, (query, answer.text)


async def test_goals_are_set_judged_beside_their_figure_and_refused_in_their_own_words(service):
    workspace_id, key, agent, agent_key = await _a_worked_day(service)
    put = await service.client.put("/api/team/goals", headers=bearer(key),
                                   json={"metric": "first_response_median_seconds", "target": 3600})
    assert put.status_code == 200, put.text
    goal = put.json()
    assert goal["team"] is None and goal["member"] is None and goal["target"] == 3600
    again = await service.client.put("/api/team/goals", headers=bearer(key),
                                     json={"metric": "first_response_median_seconds", "target": 1800})
    assert again.json()["id"] == goal["id"] and again.json()["target"] == 1800      # one per figure and subject
    mine = await service.client.put("/api/team/goals", headers=bearer(key),
                                    json={"metric": "sla_met_percent", "target": 95, "member_id": agent})
    assert mine.status_code == 200 and mine.json()["member"]["user_id"] == agent

    async def judged():
        report = (await service.client.get("/api/team/report", headers=bearer(key))).json()
        return report if report["totals"]["first_human_response"]["count"] == 2 else None
    report = await eventually(judged, timeout=10)
    by_metric = {g["metric"]: g for g in report["goals"]}
    overall = by_metric["first_response_median_seconds"]
    assert overall["actual"] == report["totals"]["first_human_response"]["median_seconds"]
    assert overall["met"] is (overall["actual"] <= 1800)
    assert by_metric["sla_met_percent"]["actual"] is None and by_metric["sla_met_percent"]["met"] is None  # no SLA

    for body, code in (({"metric": "happiness", "target": 1}, "invalid_metric"),
                       ({"metric": "sla_met_percent", "target": 101}, "invalid_target"),
                       ({"metric": "sla_met_percent", "target": -1}, "invalid_target"),
                       ({"metric": "sla_met_percent", "target": 90, "team_id": 999999}, "invalid_team"),
                       ({"metric": "sla_met_percent", "target": 90, "member_id": 999999}, "invalid_member"),
                       ({"metric": "sla_met_percent", "target": 90, "team_id": 1, "member_id": agent},
                        "invalid_subject")):
        assert_stable(await service.client.put("/api/team/goals", headers=bearer(key), json=body), 400, code)
    assert_stable(await service.client.put("/api/team/goals", headers=bearer(agent_key),
                                           json={"metric": "sla_met_percent", "target": 1}), 403, "scope_denied")
    removed = await service.client.delete(f"/api/team/goals/{goal['id']}", headers=bearer(key))
    assert removed.status_code == 200 and removed.json()["id"] == goal["id"]
    assert_stable(await service.client.delete(f"/api/team/goals/{goal['id']}", headers=bearer(key)), 404, "not_found")
    listed = (await service.client.get("/api/team/goals", headers=bearer(key))).json()["data"]
    assert [g["metric"] for g in listed] == ["sla_met_percent"]
    audit = (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]
    assert {"goal.set", "goal.removed"} <= {entry["action"] for entry in audit}


async def test_the_reports_page_draws_the_report_and_its_csv_say_what_the_api_says(service, chromium, artifacts):
    workspace_id, key, _, _ = await _a_worked_day(service)
    ann = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email="ann@example.com",
                                    role="admin", permissions=None)
    await accounts.set_member_password(service.db, member_id=ann, password=PASSWORD)
    await eventually(lambda: _answered(service, key))
    files = await in_browser_thread(_reports_in_browser, chromium, service.url, artifacts)
    report = (await service.client.get("/api/team/report", params={"since": files["since"], "to": files["to"],
                                                                    "tz": "UTC"}, headers=bearer(key))).json()
    days = list(csv.DictReader(io.StringIO(files["days"])))
    assert [(row["day"], int(row["opened"]), int(row["resolved"])) for row in days] == \
        [(d["day"], d["opened"], d["resolved"]) for d in report["by_day"]]
    members = list(csv.DictReader(io.StringIO(files["members"])))
    assert [(int(row["user_id"]), int(row["resolved"]), row["first_response_median_seconds"]) for row in members] == \
        [(m["member"]["user_id"], m["resolved"], _csv_number(m["first_human_response"]["median_seconds"]))
         for m in report["members"]]
    goals = (await service.client.get("/api/team/goals", headers=bearer(key))).json()["data"]
    assert [(g["metric"], g["target"]) for g in goals] == [("first_response_median_seconds", 300.0)]


def _csv_number(value: float | None) -> str:
    return "" if value is None else str(value)


async def _answered(service, key: str) -> bool:
    report = (await service.client.get("/api/team/report", headers=bearer(key))).json()
    return report["totals"]["first_human_response"]["count"] == 2


def _reports_in_browser(chromium: str, url: str, folder: Path) -> dict[str, str]:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page = watched_page(context, errors)
        sign_in(page, url, "ann@example.com", PASSWORD, then="/app/reports")
        page.locator("#report-range").select_option(label="The last 7 days")
        page.get_by_role("button", name="Show").click()
        expect(page).to_have_url(f"{url}/app/reports?range=last_7_days")
        expect(page.get_by_role("heading", name="Reports", exact=True)).to_be_visible()
        expect(page.locator("#report-summary")).to_contain_text("Opened")
        days = page.locator("#days-table tbody tr").count()
        assert days in (7, 8)
        expect(page.locator("#chart-days rect.series-0")).to_have_count(days)
        assert_accessible(page, "the reports page")
        page.screenshot(path=str(folder / "01-reports.png"), full_page=True)

        page.locator("#goal-metric").select_option(label="First human response, median")
        page.get_by_label("Goal (minutes for a time, a percentage for SLA met)").fill("5")
        page.get_by_role("button", name="Set goal").click()
        expect(page.locator(".notice")).to_contain_text("Goal saved.")
        expect(page.locator("#goals-table")).to_contain_text("5 min")
        expect(page.locator("svg.chart.goals .goal-line")).to_have_count(1)
        assert_accessible(page, "the reports page with a goal")
        page.emulate_media(color_scheme="dark")
        assert_accessible(page, "the reports page in dark mode")
        page.screenshot(path=str(folder / "02-reports-dark.png"), full_page=True)

        # On a phone: every chart within the screen's width, and the page accessible.
        phone = watched_page(browser.new_context(viewport={"width": 390, "height": 844}), errors)
        sign_in(phone, url, "ann@example.com", PASSWORD, then="/app/reports")
        rights = phone.evaluate("() => [...document.querySelectorAll('svg.chart')]"
                                ".map(s => s.getBoundingClientRect().right)")
        assert rights and max(rights) <= 390, rights
        no_sideways_scroll(phone)
        assert_accessible(phone, "the reports page on a phone")
        phone.screenshot(path=str(folder / "03-reports-phone.png"), full_page=True)

        found = {}
        for name in ("days", "members"):
            with page.expect_download() as download:
                page.locator(f"a.csv[href^='/app/reports/{name}.csv']").click()
            found[name] = Path(download.value.path()).read_text()
        since, to = page.evaluate("() => [document.querySelector('#report-window').dataset.since,"
                                  " document.querySelector('#report-window').dataset.to]")
        found.update(since=since, to=to)
        assert errors == []
        return found
