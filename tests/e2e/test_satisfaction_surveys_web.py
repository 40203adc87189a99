"""Customer satisfaction surveys in the web app (issue 39), in a real browser: an admin turns the survey on from the
teams page (a refused question shown in its own words, the form keeping what was typed); a customer of the platform
simulator is answered and resolved, chooses Excellent and comments; the reports page shows the CSAT tile, the
ratings' chart and table and the response with its comment, the chat's contact panel shows the rating, the ratings
download as CSV, and on a phone the new section stays within the screen; each page checked with axe."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import httpx
from playwright.sync_api import expect

from inbox_actors.access import accounts
from inbox_actors.outbound_http.verified_tls import verified_context
from tests import builders
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
PHONE = "919811300001"
QUESTION = "How did Ann do today?"
THANKS = "Thanks! Tell us more, if you like."
COMMENT = "Sorted in five minutes, brilliant."


async def _simulator(service, method: str, path: str, **kwargs) -> httpx.Response:
    async with httpx.AsyncClient(verify=verified_context(), base_url=service.simulator_url, timeout=10) as simulator:
        return await simulator.request(method, path, **kwargs)


async def _sent_to(service, number: str) -> list[dict]:
    answer = await _simulator(service, "GET", f"/simulator/numbers/{number}/messages", params={"to": PHONE})
    return answer.json()["data"]


async def test_the_survey_is_turned_on_rated_and_reported_in_a_browser(service, chromium, artifacts):
    workspace_id, number, _, key = await scale_workspace(service.db)
    ann = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email="ann@example.com",
                                    role="admin", permissions=None)
    await accounts.set_member_password(service.db, member_id=ann, password=PASSWORD)
    ann_key = (await builders.key(service.db, workspace_id, ann)).key

    await in_browser_thread(_survey_on_in_browser, chromium, service.url, artifacts)
    saved = (await service.client.get("/api/team/csat", headers=bearer(key))).json()
    assert (saved["enabled"], saved["question"], saved["thanks"]) == (True, QUESTION, THANKS)

    await customer_writes(service, number, PHONE, "I want to talk to a person")
    for action, body in (("claim", None), ("reply", {"message": "Your parcel leaves today."}), ("resolve", None)):
        answer = await service.client.post(f"/api/inbox/conversations/{PHONE}/{action}", headers=bearer(ann_key),
                                           json=body)
        assert answer.status_code == 200, answer.text

    async def surveyed():
        return any(m["type"] == "interactive" and m["text"] == QUESTION for m in await _sent_to(service, number))
    await eventually(surveyed, timeout=10)
    chose = await _simulator(service, "POST", f"/simulator/customers/{PHONE}/choices",
                             json={"phone_number_id": number, "choice": "Excellent"})
    assert chose.status_code == 200 and chose.json()["delivered_to_service"], chose.text

    async def thanked():
        return any(m["type"] == "text" and m["text"] == THANKS for m in await _sent_to(service, number))
    await eventually(thanked, timeout=10)
    await customer_writes(service, number, PHONE, COMMENT)

    async def commented():
        rated = (await chat(service, key, PHONE))["satisfaction"]
        return rated if rated and rated["comment"] == COMMENT else None
    assert (await eventually(commented, timeout=10))["rating"] == 5

    ratings = await in_browser_thread(_ratings_in_browser, chromium, service.url, artifacts)
    assert [(row["rating"], row["label"], row["count"]) for row in csv.DictReader(io.StringIO(ratings))] == [
        ("5", "Excellent", "1"), ("4", "Good", "0"), ("3", "Okay", "0"), ("2", "Poor", "0"), ("1", "Very poor", "0")]


def _survey_on_in_browser(chromium: str, url: str, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        page = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
        sign_in(page, url, "ann@example.com", PASSWORD, then="/app/teams")
        card = page.locator("section", has=page.get_by_role("heading", name="Satisfaction survey"))
        enabled = card.get_by_label("Send a survey when a chat is resolved")
        expect(enabled).not_to_be_checked()
        # A question of blanks passes the browser's `required` but not the use case: refused, nothing lost.
        enabled.check()
        card.get_by_label("Question", exact=False).fill("   ")
        card.get_by_label("Thanks after a rating", exact=False).fill(THANKS)
        card.get_by_role("button", name="Save satisfaction survey").click()
        expect(page.locator(".refusal")).to_contain_text("question must be 1 to 1,024 characters")
        expect(enabled).to_be_checked()
        expect(card.get_by_label("Thanks after a rating", exact=False)).to_have_value(THANKS)
        card.get_by_label("Question", exact=False).fill(QUESTION)
        card.get_by_role("button", name="Save satisfaction survey").click()
        expect(page.locator(".notice")).to_contain_text("Satisfaction survey saved.")
        expect(enabled).to_be_checked()
        expect(card.get_by_label("Question", exact=False)).to_have_value(QUESTION)
        assert_accessible(page, "the teams page with the satisfaction survey")
        page.screenshot(path=str(folder / "01-survey-on.png"), full_page=True)
        assert errors == []


def _ratings_in_browser(chromium: str, url: str, folder: Path) -> str:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page = watched_page(context, errors)
        sign_in(page, url, "ann@example.com", PASSWORD, then="/app/reports")
        tile = page.locator("#csat-tile")
        expect(tile).to_contain_text("Customer satisfaction")
        expect(tile).to_contain_text("100 %")
        expect(tile).to_contain_text("1 rating · mean 5.00")
        expect(page.locator("#chart-ratings rect")).to_have_count(5)
        expect(page.locator("#ratings-table tbody tr").first).to_contain_text("Excellent (5/5)")
        expect(page.locator("#ratings-table tbody tr").first.locator("td").first).to_have_text("1")
        response = page.locator("#responses-table tbody tr")
        expect(response).to_have_count(1)
        for text in ("+" + PHONE, "Excellent (5/5)", COMMENT, "Ann"):
            expect(response).to_contain_text(text)
        expect(page.locator("#members-table")).to_contain_text("100 %")
        assert_accessible(page, "the reports page with satisfaction ratings")
        page.emulate_media(color_scheme="dark")
        assert_accessible(page, "the reports page with satisfaction ratings in dark mode")
        page.screenshot(path=str(folder / "02-reports-satisfaction.png"), full_page=True)
        with page.expect_download() as download:
            page.locator("a.csv[href^='/app/reports/ratings.csv']").click()
        ratings = Path(download.value.path()).read_text()
        responses = page.request.get(f"{url}/app/reports/responses.csv?range=this_week")
        assert responses.ok, responses.status
        assert [(r["phone"], r["rating"], r["label"], r["comment"], r["member"])
                for r in csv.DictReader(io.StringIO(responses.text()))] == [(PHONE, "5", "Excellent", COMMENT, "Ann")]

        page.goto(f"{url}/app/chats/{PHONE}")
        expect(page.locator("#chat-rating")).to_contain_text("Rated Excellent (5/5)")
        expect(page.locator("#chat-rating-comment")).to_have_text(COMMENT)
        page.screenshot(path=str(folder / "03-chat-rated.png"))

        # On a phone: the section's chart and tables stay within the screen (the tables scroll in their own box).
        phone = watched_page(browser.new_context(viewport={"width": 390, "height": 844}), errors)
        sign_in(phone, url, "ann@example.com", PASSWORD, then="/app/reports")
        phone.locator("#satisfaction").scroll_into_view_if_needed()
        rights = phone.evaluate("() => [...document.querySelectorAll('#satisfaction, #satisfaction svg.chart,"
                                " #satisfaction .table-wrap')].map(e => e.getBoundingClientRect().right)")
        assert len(rights) == 4 and max(rights) <= 390, rights
        no_sideways_scroll(phone)
        phone.screenshot(path=str(folder / "04-reports-phone.png"), full_page=True)
        assert errors == []
        return ratings
