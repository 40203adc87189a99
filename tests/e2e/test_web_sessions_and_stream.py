"""The agent inbox's guard and live stream over plain HTTP, against the real server: signing in and its limits,
CSRF and origins, sign-out and suspension taking effect at once, where a sign-in may send the browser, and the
event stream (starting where the page stood, resuming after Last-Event-ID, an assigned-only member hearing only their
chats, ending on drain)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
import trio

from inbox_actors.access import accounts, sign_in
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"


async def _member_with_password(db, workspace_id: int, email: str, *, role: str = "admin", **options) -> int:
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name=email.split("@")[0].title(),
                                          email=email, role=role, **options)
    await accounts.set_member_password(db, member_id=member_id, password=PASSWORD)
    return member_id


@asynccontextmanager
async def _signed_in(service, email: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client with the member's session cookie."""
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as client:
        answer = await client.post("/app/sign-in", data={"email": email, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == "/app/inbox"
        yield client


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, html[:500]
    return found.group(1)


async def test_a_form_without_the_pages_token_or_from_another_site_changes_nothing(service, db):
    workspace_id, number, _, key = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "ann@example.com", role="admin")
    await customer_writes(service, number, "919800000301", "Can I talk to a person?")
    # The chat is handed over after the platform's webhook is answered, so the claim waits for it.
    async def handed_over():
        return (await chat(service, key, "919800000301"))["state"] == "HANDOFF_PENDING"

    await eventually(handed_over)
    async with _signed_in(service, "ann@example.com") as client:
        csrf = _csrf((await client.get("/app/inbox")).text)
        claim = "/app/chats/919800000301/claim"
        assert (await client.post(claim)).status_code == 403
        assert (await client.post(claim, data={"csrf": "0" * 64})).status_code == 403
        other_site = await client.post(claim, data={"csrf": csrf}, headers={"Origin": "https://evil.example"})
        assert other_site.status_code == 403
        detail = await chat(service, key, "919800000301")
        assert detail["state"] == "HANDOFF_PENDING"
        done = await client.post(claim, data={"csrf": csrf}, headers={"Origin": service.url})
        assert done.status_code == 303, done.text
        detail = (await service.client.get("/api/inbox/conversations/919800000301", headers=bearer(key))).json()
        assert detail["state"] == "HUMAN_ACTIVE"


async def test_sign_in_attempts_are_limited_per_account_and_sign_in_never_leaves_the_app(service, db):
    workspace_id, *_ = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "bo@example.com")
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as client:
        for _ in range(sign_in.SIGN_IN_ATTEMPTS_PER_ACCOUNT):
            wrong = await client.post("/app/sign-in", data={"email": "bo@example.com", "password": "not it at all"})
            assert wrong.status_code == 401
        over = await client.post("/app/sign-in", data={"email": "bo@example.com", "password": PASSWORD})
        assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
        assert "inbox_session" not in over.cookies

        await _member_with_password(db, workspace_id, "cy@example.com")
        for target in ("//evil.example/x", "https://evil.example/", "/api/team/members", "/app/\\evil"):
            answer = await client.post("/app/sign-in", data={"email": "cy@example.com", "password": PASSWORD,
                                                             "next": target})
            assert answer.status_code == 303 and answer.headers["location"] == "/app/inbox", target
        kept = await client.post("/app/sign-in", data={"email": "cy@example.com", "password": PASSWORD,
                                                       "next": "/app/chats/919800000302"})
        assert kept.headers["location"] == "/app/chats/919800000302"


async def test_sign_out_and_suspension_end_the_session_at_the_next_request(service, db):
    workspace_id, *_ = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "di@example.com")
    agent = await _member_with_password(db, workspace_id, "ed@example.com", role="agent")
    async with _signed_in(service, "di@example.com") as client:
        cookie = client.cookies["inbox_session"]
        csrf = _csrf((await client.get("/app/inbox")).text)
        assert (await client.post("/app/sign-out", data={"csrf": csrf})).status_code == 303
    async with httpx.AsyncClient(base_url=service.url, timeout=10, cookies={"inbox_session": cookie}) as stale:
        answer = await stale.get("/app/inbox")
        assert answer.status_code == 303 and answer.headers["location"].startswith("/app/sign-in")
        assert (await stale.get("/app/inbox/list", headers={"X-Requested-With": "fetch"})).status_code == 401

    async with _signed_in(service, "ed@example.com") as client:
        assert (await client.get("/app/inbox")).status_code == 200
        await accounts.set_member_status(db, member_id=agent, status="suspended")
        answer = await client.get("/app/inbox")
        assert answer.status_code == 303 and answer.headers["location"].startswith("/app/sign-in")


async def _events(client: httpx.AsyncClient, found: list[tuple[int, str, str]], *, last_id: int | None = None,
                  since: str | None = None, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Read the stream into `found` as (id, event, data) until cancelled or it ends."""
    headers = {"Accept": "text/event-stream", **({"Last-Event-ID": str(last_id)} if last_id is not None else {})}
    url = "/app/events" + (f"?since={since}" if since is not None else "")
    async with client.stream("GET", url, headers=headers, timeout=None) as stream:
        assert stream.status_code == 200
        task_status.started()
        event: dict[str, str] = {}
        async for line in stream.aiter_lines():
            if not line:
                if "id" in event:
                    found.append((int(event["id"]), event["event"], event["data"]))
                event = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                event[name] = value


async def _until(condition) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(0.02)


async def test_the_stream_resumes_after_the_last_event_id_and_an_assigned_only_member_hears_only_theirs(
        service, db):
    workspace_id, number, _, key = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "fay@example.com", role="admin")
    narrow = await _member_with_password(db, workspace_id, "gus@example.com", role="agent", assigned_only=True)
    heard, heard_by_narrow = [], []
    async with _signed_in(service, "fay@example.com") as admin, \
            _signed_in(service, "gus@example.com") as agent, trio.open_nursery() as nursery:
        await nursery.start(_events, admin, heard)
        await nursery.start(_events, agent, heard_by_narrow)
        await customer_writes(service, number, "919800000401", "Hello")
        await _until(lambda: any(event == "message_received" for _, event, _ in heard))
        assert all('"919800000401"' in data for _, _, data in heard)
        last_seen = heard[-1][0]
        await customer_writes(service, number, "919800000402", "Can I talk to a person?")
        # Transferred to the assigned-only member: from then on that chat's events reach them.
        claimed = await service.client.post("/api/inbox/conversations/919800000402/claim", headers=bearer(key))
        assert claimed.status_code == 200, claimed.text
        moved = await service.client.post("/api/inbox/conversations/919800000402/transfer", headers=bearer(key),
                                          json={"to_user_id": narrow})
        assert moved.status_code == 200, moved.text
        await customer_writes(service, number, "919800000402", "Still there?")
        await _until(lambda: sum(event == "message_received" for _, event, _ in heard) >= 3)
        await _until(lambda: any(event == "message_received" for _, event, _ in heard_by_narrow))
        nursery.cancel_scope.cancel()
    assert heard_by_narrow and all('"919800000402"' in data for _, _, data in heard_by_narrow)
    # Each event once. Not necessarily in id order: an id is given at the insert, and a transaction that took a
    # lower one (the status writer's, say) may commit after one that took a higher (event_stream.py).
    ids = [n for n, _, _ in heard]
    assert len(ids) == len(set(ids)), ids

    # A reconnect with the last id it had hears exactly what came after, nothing twice.
    again: list = []
    async with _signed_in(service, "fay@example.com") as admin, trio.open_nursery() as nursery:
        await nursery.start(partial(_events, admin, again, last_id=last_seen))
        await _until(lambda: {n for n, _, _ in again} >= {n for n, _, _ in heard if n > last_seen})
        nursery.cancel_scope.cancel()
    assert [n for n, _, _ in again] == [n for n, _, _ in heard if n > last_seen]


async def test_what_changes_while_a_page_loads_reaches_its_stream(service, db):
    """The page's stream starts where the stream stood before the page was read, not when the script connects: a
    status that lands in between (the simulator reads a reply within half a second) still refreshes the screen."""
    workspace_id, number, _, key = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "joe@example.com")
    await customer_writes(service, number, "919800000601", "Hello")
    async with _signed_in(service, "joe@example.com") as client:
        pages = {name: (await client.get(path)).text for name, path in
                 (("chat", "/app/chats/919800000601"), ("inbox", "/app/inbox?view=open"))}
        await customer_writes(service, number, "919800000601", "Anyone?")  # after the pages, before their streams
        for name, html in pages.items():
            since = re.search(r'data-live-since="(\d+)"', html)
            assert since, (name, html[:500])
            late, from_now = [], []
            async with trio.open_nursery() as nursery:
                await nursery.start(partial(_events, client, late, since=since.group(1)))
                await nursery.start(_events, client, from_now)
                await _until(lambda: any(event == "message_received" for _, event, _ in late))
                nursery.cancel_scope.cancel()
            assert all('"919800000601"' in data for _, _, data in late), late
            assert not any(event == "message_received" for _, event, _ in from_now), (name, from_now)


async def test_the_stream_ends_when_the_service_begins_to_drain(service, db):
    workspace_id, *_ = await scale_workspace(db)
    await _member_with_password(db, workspace_id, "hal@example.com")
    found: list = []
    async with _signed_in(service, "hal@example.com") as client:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                await nursery.start(_events, client, found)
                for node in service.nodes:  # every node: the stream may be relayed to the workspace's own
                    node.app.extensions["inbox"].lifecycle.begin_draining()
        # The reading task returned by itself: the stream ended.


async def test_an_assigned_only_member_sees_only_their_chats_in_every_view_and_no_one_elses_chat(service, db):
    workspace_id, number, _, key = await scale_workspace(db)
    narrow = await _member_with_password(db, workspace_id, "ivy@example.com", role="agent", assigned_only=True)
    for phone in ("919800000501", "919800000502"):
        await customer_writes(service, number, phone, "Can I talk to a person?")
    claimed = await service.client.post("/api/inbox/conversations/919800000501/claim", headers=bearer(key))
    assert claimed.status_code == 200, claimed.text
    moved = await service.client.post("/api/inbox/conversations/919800000501/transfer", headers=bearer(key),
                                      json={"to_user_id": narrow})
    assert moved.status_code == 200, moved.text
    async with _signed_in(service, "ivy@example.com") as client:
        for view in ("mine", "unassigned", "open", "resolved"):
            page = (await client.get("/app/inbox", params={"view": view})).text
            assert "919800000502" not in page, view
        assert "/app/chats/919800000501" in (await client.get("/app/inbox", params={"view": "mine"})).text
        assert "919800000502" not in (await client.get("/app/inbox", params={"q": "Asha"})).text
        assert (await client.get("/app/chats/919800000502")).status_code == 404
        assert (await client.get("/app/chats/919800000501")).status_code == 200
        csrf = _csrf((await client.get("/app/inbox")).text)
        refused = await client.post("/app/chats/919800000502/claim", data={"csrf": csrf})
        assert refused.status_code == 404
