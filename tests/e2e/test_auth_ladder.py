"""Every rung of the auth ladder against the real server, on real routes: whoami (core, any key), the route
list (full API), a chat and its claim (full API, scope inbox) and send-message (core, scope whatsapp_api,
sentence errors). A call that passes the ladder gets the route's own answer: 404 for the chat (none exists),
400 for an empty send.
"""

import pytest

from inbox_actors.access import accounts
from inbox_actors.access.activity_log import wait_recorded
from tests import builders
from tests.e2e.conftest import assert_stable, bearer
from tests.waiting import eventually_status

WHOAMI = "/api/reporting/v1/whoami"
ROUTES = "/api/docs/routes"
CHAT = "/api/inbox/conversations/919800000001"
CLAIM = CHAT + "/claim"
SEND = "/api/send-message"
# Writes of every method on scoped routes (inbox and contacts).
WRITES = (("POST", CLAIM), ("PUT", "/api/contacts/919800000001/name"),
          ("DELETE", "/api/contacts/919800000001/attributes/plan"), ("POST", SEND))


def passed_ladder(response) -> bool:
    """The route itself answered: the chat is not there, or the send body is empty."""
    if response.status_code == 404:
        return response.json()["error"] == "not_found"
    return response.status_code == 400 and response.json() == {"error": "Phone number is required"}


# -- 1. no credential ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": "Basic dXNlcjpwYXNz"},
])
async def test_no_token(service, headers):
    for path in (WHOAMI, ROUTES, CHAT):
        response = await service.client.get(path, headers=headers)
        assert response.status_code == 401
        assert response.json() == {"error": "Unauthorized: No token provided"}


# -- 2. unknown or revoked -----------------------------------------------------------------------------------

async def test_unknown_and_malformed_keys(service):
    issued = await builders.plaintext_key(service.db)
    tampered = issued.key[:-1] + ("A" if issued.key[-1] != "A" else "B")
    for token in (tampered, issued.key + "x", issued.key[:-5], "inbox_", "other_" + issued.key[6:],
                  "x" * 5000, "Bearer", '";DROP TABLE api_keys;--'):
        response = await service.client.get(WHOAMI, headers=bearer(token))
        assert response.status_code == 403, token
        assert response.json() == {"error": "Forbidden: Invalid or revoked API key"}


async def test_revoked_key(service):
    issued = await builders.plaintext_key(service.db)
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 200
    await service.db.execute("UPDATE api_keys SET revoked_at = now() WHERE id = $1", issued.id)
    response = await eventually_status(service, WHOAMI, issued.key, 403)
    assert response.json() == {"error": "Forbidden: Invalid or revoked API key"}


async def test_rotated_key_works_during_grace_and_stops_after(service):
    issued = await builders.plaintext_key(service.db)
    await service.db.execute("UPDATE api_keys SET grace_until = now() + interval '1 hour' WHERE id = $1", issued.id)
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 200
    await service.db.execute("UPDATE api_keys SET grace_until = now() - interval '1 second' WHERE id = $1", issued.id)
    response = await eventually_status(service, WHOAMI, issued.key, 403)
    assert response.json() == {"error": "Forbidden: Invalid or revoked API key"}


# -- 3. expired ----------------------------------------------------------------------------------------------

async def test_expired_key(service):
    issued = await builders.plaintext_key(service.db, expires_in_days=1)
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 200
    await service.db.execute("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", issued.id)
    await eventually_status(service, WHOAMI, issued.key, 403)
    for path in (WHOAMI, CHAT):
        assert_stable(await service.client.get(path, headers=bearer(issued.key)), 403, "key_expired")


# -- 4 and 5. plans ------------------------------------------------------------------------------------------

async def test_starter_has_no_api(service):
    issued = await builders.plaintext_key(service.db, plan="starter")
    for path in (WHOAMI, ROUTES, CHAT):
        assert_stable(await service.client.get(path, headers=bearer(issued.key)), 403, "api_not_in_plan")


async def test_growth_key_calls_the_core_api_only(service):
    issued = await builders.plaintext_key(service.db, plan="growth")
    whoami = await service.client.get(WHOAMI, headers=bearer(issued.key))
    assert whoami.status_code == 200
    assert whoami.json()["api_tier"] == "core"
    for path in (ROUTES, CHAT):
        assert_stable(await service.client.get(path, headers=bearer(issued.key)), 403, "api_access_not_enabled")
    assert passed_ladder(await service.client.post(SEND, headers=bearer(issued.key)))


async def test_a_downgrade_keeps_the_key_and_refuses_it_by_plan(service):
    issued = await builders.plaintext_key(service.db, plan="scale")
    assert (await service.client.get(ROUTES, headers=bearer(issued.key))).status_code == 200
    workspace_id = (await service.client.get(WHOAMI, headers=bearer(issued.key))).json()["workspace_id"]
    await accounts.set_plan(service.db, workspace_id=workspace_id, plan="growth")
    assert_stable(await eventually_status(service, ROUTES, issued.key, 403), 403, "api_access_not_enabled")
    await accounts.set_plan(service.db, workspace_id=workspace_id, plan="starter")
    assert_stable(await eventually_status(service, WHOAMI, issued.key, 403), 403, "api_not_in_plan")
    await accounts.set_plan(service.db, workspace_id=workspace_id, plan="scale")
    await eventually_status(service, ROUTES, issued.key, 200)


# -- 6. read-only --------------------------------------------------------------------------------------------

async def test_read_only_key_refused_on_every_write_method(service):
    issued = await builders.plaintext_key(service.db, scopes=("inbox:read", "contacts:read"))
    assert passed_ladder(await service.client.get(CHAT, headers=bearer(issued.key)))
    # Every write, even where its scopes cover nothing at all (send-message needs whatsapp_api).
    for method, path in WRITES:
        response = await service.client.request(method, path, headers=bearer(issued.key), json={})
        assert_stable(response, 403, "read_only_key")


# -- 7. scopes -----------------------------------------------------------------------------------------------

async def test_scope_denied(service):
    issued = await builders.plaintext_key(service.db, scopes=("analytics", "templates:read"))
    body = assert_stable(await service.client.get(CHAT, headers=bearer(issued.key)), 403, "scope_denied")
    assert body["requiredPermission"] == "inbox:read"
    assert body["keyScopes"] == ["analytics", "templates:read"]
    body = assert_stable(await service.client.post(SEND, headers=bearer(issued.key)), 403, "scope_denied")
    assert body["requiredPermission"] == "whatsapp_api"


async def test_read_variant_allows_get_only(service):
    issued = await builders.plaintext_key(service.db, scopes=("inbox:read", "analytics"))
    assert passed_ladder(await service.client.get(CHAT, headers=bearer(issued.key)))
    body = assert_stable(await service.client.post(CLAIM, headers=bearer(issued.key)), 403, "scope_denied")
    assert body["requiredPermission"] == "inbox"


# -- 8. creator status ---------------------------------------------------------------------------------------

async def test_suspended_creator(service):
    issued = await builders.plaintext_key(service.db)
    member_id = await service.db.fetchval("SELECT created_by FROM api_keys WHERE id = $1", issued.id)
    await accounts.set_member_status(service.db, member_id=member_id, status="suspended")
    assert_stable(await eventually_status(service, WHOAMI, issued.key, 403), 403, "account_suspended")
    response = await service.client.post(SEND, headers=bearer(issued.key))
    assert response.status_code == 403
    assert response.json() == {"error": "Account suspended. Contact your admin."}
    await accounts.set_member_status(service.db, member_id=member_id, status="active")
    await eventually_status(service, WHOAMI, issued.key, 200)


async def test_removed_creator(service):
    issued = await builders.plaintext_key(service.db)
    member_id = await service.db.fetchval("SELECT created_by FROM api_keys WHERE id = $1", issued.id)
    await accounts.set_member_status(service.db, member_id=member_id, status="removed")
    await eventually_status(service, WHOAMI, issued.key, 403)
    for path in (WHOAMI, CHAT):
        assert_stable(await service.client.get(path, headers=bearer(issued.key)), 403, "membership_revoked")


# -- 9. creator permissions ----------------------------------------------------------------------------------

async def test_key_never_exceeds_its_creator(service):
    issued = await builders.plaintext_key(service.db, role="agent", permissions=["analytics:read"])
    body = assert_stable(await service.client.get(CHAT, headers=bearer(issued.key)), 403, "permission_denied")
    assert body["requiredPermission"] == "inbox:read"
    assert (await service.client.get(WHOAMI, headers=bearer(issued.key))).status_code == 200


async def test_agent_defaults_cover_the_inbox(service):
    issued = await builders.plaintext_key(service.db, role="agent")
    assert passed_ladder(await service.client.post(CLAIM, headers=bearer(issued.key)))


# -- whoami --------------------------------------------------------------------------------------------------

async def test_whoami_is_exactly_the_spec_shape(service):
    issued = await builders.plaintext_key(service.db, scopes=("inbox:read", "analytics:read"))
    response = await service.client.get(WHOAMI, headers=bearer(issued.key))
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    workspace_id = await service.db.fetchval("SELECT workspace_id FROM api_keys WHERE id = $1", issued.id)
    assert body == {
        "workspace_id": workspace_id,
        "auth": "api_key",
        "key": {"id": issued.id, "scopes": ["analytics:read", "inbox:read"], "read_only": True},
        "api_access": True,
        "api_tier": "full",
        "reporting_api": "v1",
    }


async def test_refusals_change_nothing_but_the_record_of_use(service):
    issued = await builders.plaintext_key(service.db, plan="starter")
    columns = "id, name, scopes, read_only, rate_limit_per_minute, expires_at, revoked_at, replaced_by, grace_until"
    before = await service.db.fetch(f"SELECT {columns} FROM api_keys ORDER BY id")
    for _ in range(3):
        await service.client.get(WHOAMI, headers=bearer(issued.key))
    await wait_recorded(service.actors)
    assert await service.db.fetch(f"SELECT {columns} FROM api_keys ORDER BY id") == before
    # Refused attempts are still uses of the key: they are in its activity and move its last-used time.
    assert await service.db.fetchval("SELECT count(*) FROM key_activity WHERE key_id = $1", issued.id) == 3
    assert await service.db.fetchval("SELECT last_used_at FROM api_keys WHERE id = $1", issued.id) is not None

