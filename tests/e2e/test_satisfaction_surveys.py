"""Customer satisfaction surveys over HTTP (issue 39): the settings' calls and their refusals, and the round trip
through the platform simulator — a resolved chat's customer gets the list message, chooses a rating, gets the thanks,
writes a comment — with the rating and comment on the chat, in the responses, in the team report and against a goal,
and `csat_received` in the outbox; neither answer reopens the chat, and the customer's next message is an ordinary
one."""

from __future__ import annotations

import httpx

from inbox_actors.outbound_http.verified_tls import verified_context
from tests import builders
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.waiting import eventually

PHONE = "919811200001"


async def _simulator(service, method: str, path: str, **kwargs) -> httpx.Response:
    async with httpx.AsyncClient(verify=verified_context(), base_url=service.simulator_url, timeout=10) as simulator:
        return await simulator.request(method, path, **kwargs)


async def _sent_to(service, number: str, phone: str) -> list[dict]:
    answer = await _simulator(service, "GET", f"/simulator/numbers/{number}/messages", params={"to": phone})
    return answer.json()["data"]


async def test_settings_are_a_team_setting_with_refusals_in_their_own_words(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    read = await service.client.get("/api/team/csat", headers=bearer(key))
    assert read.status_code == 200 and read.json()["enabled"] is False and read.json()["question"]
    for body, code in (({"enabled": True, "question": "  "}, "invalid_question"),
                       ({"enabled": True, "question": "x" * 1025}, "invalid_question"),
                       ({"enabled": "yes"}, "invalid_enabled"), ({"enabled": True, "stars": 5}, "invalid_body")):
        assert_stable(await service.client.put("/api/team/csat", headers=bearer(key), json=body), 400, code)
    agent = await builders.member(service.db, workspace_id, "agent", ["inbox"])
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    assert_stable(await service.client.put("/api/team/csat", headers=bearer(agent_key), json={"enabled": True}),
                  403, "scope_denied")
    saved = await service.client.put("/api/team/csat", headers=bearer(key),
                                     json={"enabled": True, "question": "How did we do?", "thanks": ""})
    assert saved.status_code == 200 and (saved.json()["enabled"], saved.json()["thanks"]) == (True, "")
    audit = await service.client.get("/api/team/audit-log?action=csat.changed", headers=bearer(key))
    assert [entry["details"]["question"] for entry in audit.json()["data"]] == ["How did we do?"]
    assert_stable(await service.client.get("/api/team/csat/responses?member_id=abc", headers=bearer(key)),
                  400, "invalid_member_id")


async def test_a_resolved_chat_is_rated_and_commented_on_through_the_simulator(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    team = (await service.client.post("/api/team/teams", headers=bearer(key), json={"name": "Billing"})).json()
    assert (await service.client.put("/api/team/csat", headers=bearer(key), json={"enabled": True})).status_code == 200
    await customer_writes(service, number, PHONE, "I want to talk to a person")
    assert (await service.client.post(f"/api/inbox/conversations/{PHONE}/team", headers=bearer(key),
                                      json={"team_id": team["id"]})).status_code == 200
    assert (await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(key))
            ).status_code == 200
    assert (await service.client.post(f"/api/inbox/conversations/{PHONE}/reply", headers=bearer(key),
                                      json={"message": "Your refund is on its way."})).status_code == 200
    assert (await service.client.post(f"/api/inbox/conversations/{PHONE}/resolve", headers=bearer(key))
            ).status_code == 200

    async def survey():
        found = [m for m in await _sent_to(service, number, PHONE) if m["type"] == "interactive"]
        return found[0] if found else None
    sent = await eventually(survey, timeout=10)
    assert sent["text"] == "How would you rate the help you got today?"
    thread = (await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/messages?order=desc",
                                       headers=bearer(key))).json()["data"]
    assert thread[0]["type"] == "interactive" and thread[0]["sender_type"] == "system"

    async def answered():   # the reply's (or the survey's) delivery ends the customer's wait
        detail = await chat(service, key, PHONE)
        return detail if not detail["needs_reply"] else None
    unread = (await eventually(answered, timeout=10))["unread_count"]
    chose = await _simulator(service, "POST", f"/simulator/customers/{PHONE}/choices",
                             json={"phone_number_id": number, "choice": "Good"})
    assert chose.status_code == 200 and chose.json()["delivered_to_service"], chose.text
    bad = await _simulator(service, "POST", f"/simulator/customers/{PHONE}/choices",
                           json={"phone_number_id": number, "choice": "Superb"})
    assert bad.status_code == 400

    async def rated():
        detail = await chat(service, key, PHONE)
        return detail if detail["satisfaction"] else None
    detail = await eventually(rated, timeout=10)
    assert detail["satisfaction"]["rating"] == 4 and detail["satisfaction"]["label"] == "Good"
    # An answer to the business's question: the chat stays resolved, unread and unwaited.
    assert (detail["state"], detail["unread_count"], detail["needs_reply"]) == ("AI_ONLY", unread, False)

    async def thanked():
        texts = [m["text"] for m in await _sent_to(service, number, PHONE) if m["type"] == "text"]
        return any("tell us more" in (text or "") for text in texts)
    await eventually(thanked, timeout=10)
    await customer_writes(service, number, PHONE, "Quick and friendly, thank you!")

    async def commented():
        detail = await chat(service, key, PHONE)
        return detail if detail["satisfaction"]["comment"] else None
    detail = await eventually(commented, timeout=10)
    assert detail["satisfaction"]["comment"] == "Quick and friendly, thank you!"
    assert (detail["state"], detail["unread_count"], detail["needs_reply"]) == ("AI_ONLY", unread, False)

    responses = (await service.client.get("/api/team/csat/responses", headers=bearer(key))).json()["data"]
    assert [(r["rating"], r["label"], r["comment"], r["member"]["user_id"], r["team"]["name"]) for r in responses] \
        == [(4, "Good", "Quick and friendly, thank you!", admin, "Billing")]
    report = (await service.client.get("/api/team/report", headers=bearer(key))).json()
    assert report["totals"]["satisfaction"] == {
        "responses": 1, "average_rating": 4.0, "csat_percent": 100.0,
        "by_rating": [{"rating": n, "label": label, "count": int(n == 4)}
                      for n, label in ((5, "Excellent"), (4, "Good"), (3, "Okay"), (2, "Poor"), (1, "Very poor"))]}
    billing = next(t for t in report["teams"] if t["team"]["id"] == team["id"])
    assert billing["satisfaction"]["responses"] == 1
    goal = await service.client.put("/api/team/goals", headers=bearer(key),
                                    json={"metric": "csat_percent", "target": 90})
    assert goal.status_code == 200, goal.text
    judged = (await service.client.get("/api/team/report", headers=bearer(key))).json()["goals"]
    assert [(g["metric"], g["actual"], g["met"]) for g in judged] == [("csat_percent", 100.0, True)]

    events = await service.db.fetch("SELECT data FROM webhook_outbox WHERE workspace_id = $1 AND event = $2"
                                    " ORDER BY id", workspace_id, "csat_received")
    import json
    datas = [json.loads(row["data"]) if isinstance(row["data"], str) else row["data"] for row in events]
    assert [(d["rating"], d["comment"]) for d in datas] == [(4, None), (4, "Quick and friendly, thank you!")]

    # The comment closed the survey: the customer's next message is an ordinary one, waiting for an answer.
    await customer_writes(service, number, PHONE, "One more thing: can I change my address?")

    async def waiting():
        detail = await chat(service, key, PHONE)
        return detail if detail["needs_reply"] or detail["state"] != "AI_ONLY" else None
    await eventually(waiting, timeout=10)
    assert (await chat(service, key, PHONE))["satisfaction"]["comment"] == "Quick and friendly, thank you!"
