"""Per-key and per-IP limits over real sockets: bodies, headers, exemptions, and accuracy under concurrency."""

import pytest
import trio

from inbox_actors.access.activity_log import wait_recorded
from tests import builders
from tests.e2e.conftest import bearer, with_settings
from tests.waiting import eventually, eventually_status

WHOAMI = "/api/reporting/v1/whoami"
# The real send route; an empty body is answered by the route itself (400) once the limits let it through.
SEND = "/api/send-message"
PASSED = 400


@pytest.fixture
def service_settings(service_settings):
    # A low ceiling keeps the per-IP tests short; the default (1,000) is checked in the settings tests.
    return with_settings(service_settings, ip_limit_per_minute=50)


async def hammer(client, path: str, key: str, clients: int, each: int, method: str = "GET") -> list:
    responses = []

    async def one_client():
        for _ in range(each):
            responses.append(await client.request(method, path, headers=bearer(key)))

    async with trio.open_nursery() as nursery:
        for _ in range(clients):
            nursery.start_soon(one_client)
    return responses


async def test_key_limit_is_exact_under_four_concurrent_clients(service):
    issued = await builders.plaintext_key(service.db, rate_limit_per_minute=10)
    responses = await hammer(service.client, WHOAMI, issued.key, clients=4, each=6)
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * 10 + [429] * 14


async def test_key_429_body_and_headers(service):
    issued = await builders.plaintext_key(service.db, rate_limit_per_minute=10)
    ok = [await service.client.get(WHOAMI, headers=bearer(issued.key)) for _ in range(10)]
    assert [r.headers["X-RateLimit-Remaining"] for r in ok] == [str(n) for n in range(9, -1, -1)]
    assert all(r.headers["X-RateLimit-Limit"] == "10" for r in ok)
    assert 59 <= int(ok[-1].headers["X-RateLimit-Reset"]) <= 60

    limited = await service.client.get(WHOAMI, headers=bearer(issued.key))
    assert limited.status_code == 429
    body = limited.json()
    assert body["error"] == "rate_limited"
    assert isinstance(body["message"], str)
    assert 1 <= body["retry_after_seconds"] <= 60
    assert limited.headers["Retry-After"] == str(body["retry_after_seconds"])
    assert limited.headers["X-RateLimit-Limit"] == "10"
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    assert "X-RateLimit-Reset" in limited.headers


async def test_default_limit_is_600_and_shown_on_every_response(service):
    issued = await builders.plaintext_key(service.db)
    response = await service.client.get(WHOAMI, headers=bearer(issued.key))
    assert response.headers["X-RateLimit-Limit"] == "600"
    assert response.headers["X-RateLimit-Remaining"] == "599"


async def test_sends_are_not_held_to_the_default_key_limit_nor_the_ip_ceiling(service):
    issued = await builders.plaintext_key(service.db)
    responses = [await service.client.post(SEND, headers=bearer(issued.key)) for _ in range(60)]
    assert {r.status_code for r in responses} == {PASSED}  # 60 > the IP ceiling of 50 in this test
    assert "X-RateLimit-Limit" not in responses[0].headers
    # Nor do sends use up the key's default allowance.
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).headers["X-RateLimit-Remaining"] == "599"


async def test_an_explicit_key_limit_applies_to_sends_too(service):
    issued = await builders.plaintext_key(service.db, rate_limit_per_minute=10)
    statuses = [(await service.client.post(SEND, headers=bearer(issued.key))).status_code for _ in range(12)]
    assert statuses == [PASSED] * 10 + [429] * 2


async def test_ip_ceiling_comes_before_the_key_limit_and_speaks_sentences(service):
    issued = await builders.plaintext_key(service.db)
    other = await builders.plaintext_key(service.db)
    responses = await hammer(service.client, WHOAMI, issued.key, clients=4, each=13)
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 50 and statuses.count(429) == 2
    limited = next(r for r in responses if r.status_code == 429)
    body = limited.json()
    assert list(body) == ["error"] and "IP address" in body["error"]
    assert limited.headers["RateLimit-Limit"] == "50"
    assert limited.headers["RateLimit-Remaining"] == "0"
    assert limited.headers["RateLimit-Policy"] == "50;w=60"
    assert int(limited.headers["Retry-After"]) >= 1
    assert int(limited.headers["RateLimit-Reset"]) >= 1
    # The ceiling is the address's, whatever key it uses, and it binds calls without a key too.
    assert (await service.client.get(WHOAMI, headers=bearer(other.key))).status_code == 429
    assert (await service.client.get(WHOAMI)).status_code == 429


async def test_edited_limit_applies_from_the_next_call(service):
    issued = await builders.plaintext_key(service.db, rate_limit_per_minute=10)
    for _ in range(10):
        await service.client.get(WHOAMI, headers=bearer(issued.key))
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 429
    await service.db.execute("UPDATE api_keys SET rate_limit_per_minute = 20 WHERE id = $1", issued.id)
    response = await eventually_status(service, WHOAMI, issued.key, 200)
    assert response.headers["X-RateLimit-Limit"] == "20"


async def test_refused_calls_show_the_key_state_without_using_it(service):
    issued = await builders.plaintext_key(service.db, plan="growth", rate_limit_per_minute=10)
    await service.client.get(WHOAMI, headers=bearer(issued.key))
    refused = await service.client.get("/api/docs/routes", headers=bearer(issued.key))
    assert refused.status_code == 403 and refused.json()["error"] == "api_access_not_enabled"
    assert refused.headers["X-RateLimit-Limit"] == "10"
    assert refused.headers["X-RateLimit-Remaining"] == "9"  # the refusal used none of it
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).headers["X-RateLimit-Remaining"] == "8"


async def test_a_key_refused_by_the_ip_ceiling_before_any_lookup_is_still_in_its_activity_log(service):
    # The spec, Authentication 6: "Audit: every call, including refused and rate-limited ones, is logged per key
    # with method, path, status and IP". Over the per-IP ceiling nothing reaches PostgreSQL, not even the key's
    # lookup, so the record names the key by its hash and the activity log's writer resolves it.
    other = await builders.plaintext_key(service.db)
    never_seen = await builders.plaintext_key(service.db)
    await hammer(service.client, WHOAMI, other.key, clients=5, each=10)  # the ceiling of 50, spent
    refused = await service.client.get(WHOAMI, headers=bearer(never_seen.key))
    assert refused.status_code == 429 and "IP address" in refused.json()["error"]
    not_a_key = await service.client.get(WHOAMI, headers=bearer("inbox_" + "A" * 43))
    assert not_a_key.status_code == 429
    await wait_recorded(service.actors)
    rows = await service.db.fetch("SELECT workspace_id, method, path, status, ip FROM key_activity"
                                  " WHERE key_id = $1", never_seen.id)
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM api_keys WHERE id = $1", never_seen.id)
    assert [dict(row) for row in rows] == [{"workspace_id": workspace_id, "method": "GET", "path": WHOAMI,
                                            "status": 429, "ip": "127.0.0.1"}]
    assert await service.db.fetchval("SELECT count(*) FROM key_activity WHERE key_id NOT IN ($1, $2)",
                                     other.id, never_seen.id) == 0


async def test_an_admin_exempts_a_long_standing_integration_from_the_default_limits_but_not_from_its_own(service):
    # The spec, Rate limits: "Some long-standing integrations are exempt" from the default per-key limit and the
    # per-IP ceiling; "a limit set explicitly on a key applies to every call including sends".
    admin = await builders.plaintext_key(service.db)
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM api_keys WHERE id = $1", admin.id)
    member_id = await service.db.fetchval("SELECT created_by FROM api_keys WHERE id = $1", admin.id)
    integration = await builders.key(service.db, workspace_id, member_id)
    capped = await builders.key(service.db, workspace_id, member_id, rate_limit_per_minute=10)
    scoped = await builders.key(service.db, workspace_id, member_id, ("inbox",))

    refused = await service.client.patch(f"/api/keys/{integration.id}", headers=bearer(scoped.key),
                                         json={"limits_exempt": True})
    assert refused.status_code == 403 and refused.json()["error"] == "scope_denied"  # admins only
    for key in (integration, capped):
        marked = await service.client.patch(f"/api/keys/{key.id}", headers=bearer(admin.key),
                                            json={"limits_exempt": True})
        assert marked.status_code == 200 and marked.json()["limits_exempt"] is True, marked.text
    shown = await service.client.get(f"/api/keys/{integration.id}", headers=bearer(admin.key))
    assert shown.json()["limits_exempt"] is True
    audit = (await service.client.get("/api/team/audit-log", headers=bearer(admin.key))).json()["data"]
    assert audit[0]["action"] == "key.edited" and audit[0]["details"]["limits_exempt"] is True

    # The ceiling of 50 per IP, spent; the exempt key goes on, with no default per-key limit either.
    await hammer(service.client, WHOAMI, admin.key, clients=5, each=10)
    assert (await service.client.get(WHOAMI, headers=bearer(admin.key))).status_code == 429

    async def passes():
        response = await service.client.get(WHOAMI, headers=bearer(integration.key))
        return response if response.status_code == 200 else None

    first = await eventually(passes)  # once every process has heard of the change
    assert "X-RateLimit-Limit" not in first.headers
    assert sorted({r.status_code for r in await hammer(service.client, WHOAMI, integration.key, 4, 15)}) == [200]
    # Its own limit still binds the other exempt key.
    statuses = [r.status_code for r in await hammer(service.client, WHOAMI, capped.key, 1, 12)]
    assert statuses == [200] * 10 + [429] * 2

    # The admin's own key is held by the ceiling now; the integration's (full access, made by an admin) is not.
    unmarked = await service.client.patch(f"/api/keys/{integration.id}", headers=bearer(integration.key),
                                          json={"limits_exempt": False})
    assert unmarked.json()["limits_exempt"] is False

    async def ceiling_again():
        response = await service.client.get(WHOAMI, headers=bearer(integration.key))
        return response if response.status_code == 429 else None

    assert "IP address" in (await eventually(ceiling_again)).json()["error"]
