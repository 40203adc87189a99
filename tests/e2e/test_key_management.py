"""Key management, `/api/keys`, against the real server: the spec's key lifecycle (create, expiry, rotate with
grace, revoke, edit), the 20-active-keys limit, who may manage keys, and the stable error codes.

Every refusal is also checked to leave `api_keys` as it was (`key_rows` leaves out last_used_at, which moves
with every call a key makes, refused ones included).
"""

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
import trio

from inbox_actors.access import accounts, activity_log
from inbox_actors.access.sessions import create_session
from tests import builders
from tests.e2e.conftest import assert_stable, bearer
from tests.waiting import eventually_status

KEYS = "/api/keys"
WHOAMI = "/api/reporting/v1/whoami"
INVALID_KEY = {"error": "Forbidden: Invalid or revoked API key"}
NEW = {"name": "x", "scopes": ["inbox"]}  # a valid create body
KEY_SHAPE = re.compile(r"^inbox_[A-Za-z0-9_-]{43}$")
VIEW_FIELDS = {"id", "name", "scopes", "read_only", "status", "rate_limit_per_minute", "expires_at", "created_at",
               "created_by", "last_used_at", "revoked_at", "replaced_by", "grace_until", "limits_exempt"}


@dataclass
class Team:
    workspace_id: int
    admin_id: int
    key: accounts.IssuedKey  # a full-access key created by the admin
    admin_key: dict[str, str]  # its Authorization header
    session: dict[str, str]  # the admin's dashboard session


async def make_team(db, plan: str = "scale") -> Team:
    workspace_id = await builders.workspace(db, plan)
    admin_id = await builders.member(db, workspace_id)
    issued = await builders.key(db, workspace_id, admin_id)
    return Team(workspace_id, admin_id, issued, bearer(issued.key), await session_of(db, admin_id))


async def session_of(db, member_id: int, *, hours: int = 8, expired: bool = False) -> dict[str, str]:
    """A session's bearer header; `expired`: one whose expiry passed an hour ago, by PostgreSQL's clock, which
    judges it."""
    token, _ = await create_session(db, member_id=member_id, hours=hours)
    if expired:
        await db.execute("UPDATE member_sessions SET expires_at = now() - interval '1 hour' WHERE token_hash = $1",
                         hashlib.sha256(token.encode()).digest())
    return bearer(token)


@pytest.fixture
async def team(service) -> Team:
    return await make_team(service.db)


# -- helpers -------------------------------------------------------------------------------------------------

async def create_key(service, auth: dict[str, str], **body) -> dict:
    response = await create(service, auth, **body)
    assert response.status_code == 201, response.text
    return response.json()


async def create(service, auth: dict[str, str], **body):
    return await service.client.post(KEYS, json={"name": "integration", "scopes": ["inbox"], **body}, headers=auth)


async def rotate(service, auth: dict[str, str], key_id: int, **body):
    return await service.client.post(f"{KEYS}/{key_id}/rotate", json=body, headers=auth)


async def revoke(service, auth: dict[str, str], key_id: int):
    return await service.client.post(f"{KEYS}/{key_id}/revoke", headers=auth)


async def whoami(service, key: str):
    return await service.client.get(WHOAMI, headers=bearer(key))


async def expire(db, key_id: int) -> None:
    await db.execute("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", key_id)


async def key_rows(db) -> list[dict]:
    return [dict(r) for r in await db.fetch(
        "SELECT id, workspace_id, created_by, name, key_hash, scopes, read_only, rate_limit_per_minute, expires_at,"
        " revoked_at, replaced_by, grace_until, created_at, updated_at FROM api_keys ORDER BY id")]


def near(value: str, expected: datetime) -> bool:
    return abs(datetime.fromisoformat(value.replace("Z", "+00:00")) - expected) < timedelta(minutes=1)


def from_now(**delta) -> datetime:
    return datetime.now(timezone.utc) + timedelta(**delta)


def management_calls(key_id: int) -> list[tuple[str, str, dict | None]]:
    """Every key-management call; the first three are reads."""
    return [("GET", KEYS, None), ("GET", f"{KEYS}/{key_id}", None), ("GET", f"{KEYS}/{key_id}/activity", None),
            ("POST", KEYS, NEW), ("PATCH", f"{KEYS}/{key_id}", {"name": "renamed"}),
            ("POST", f"{KEYS}/{key_id}/rotate", {}), ("POST", f"{KEYS}/{key_id}/revoke", None)]


# -- create --------------------------------------------------------------------------------------------------

async def test_create_shows_the_plaintext_once_and_the_key_works_at_once(service, team):
    created = await create_key(service, team.admin_key, name="CRM sync", scopes=["inbox", "contacts:read"],
                               expires_in_days=30, rate_limit_per_minute=120)
    plaintext = created.pop("key")
    assert KEY_SHAPE.fullmatch(plaintext)
    assert set(created) == VIEW_FIELDS
    assert created["name"] == "CRM sync" and sorted(created["scopes"]) == ["contacts:read", "inbox"]
    assert (created["status"], created["read_only"], created["rate_limit_per_minute"]) == ("active", False, 120)
    assert created["created_by"]["user_id"] == team.admin_id and near(created["expires_at"], from_now(days=30))
    assert created["revoked_at"] is created["replaced_by"] is created["grace_until"] is created["last_used_at"] is None

    answer = await whoami(service, plaintext)
    assert answer.status_code == 200, answer.text
    assert answer.json()["key"] == {"id": created["id"], "scopes": ["contacts:read", "inbox"], "read_only": False}

    # Only the SHA-256 is stored; the plaintext is in no row and in no later answer.
    stored = await service.db.fetchval("SELECT key_hash FROM api_keys WHERE id = $1", created["id"])
    assert bytes(stored) == hashlib.sha256(plaintext.encode()).digest()
    for row in await service.db.fetch("SELECT * FROM api_keys"):
        assert plaintext not in repr(dict(row))
    for auth in (team.admin_key, team.session):
        listed = await service.client.get(KEYS, headers=auth)
        shown = await service.client.get(f"{KEYS}/{created['id']}", headers=auth)
        assert listed.status_code == shown.status_code == 200
        assert plaintext not in listed.text and plaintext not in shown.text
        assert shown.json() == {**created, "last_used_at": shown.json()["last_used_at"]}
        assert all(set(view) == VIEW_FIELDS for view in listed.json()["data"])


@pytest.mark.parametrize("scopes, read_only, write_answer", [
    (["inbox:read"], True, "read_only_key"),
    (["inbox:read", "analytics:read"], True, "read_only_key"),
    (["inbox:read", "analytics"], False, "scope_denied"),
    (["all"], False, "invalid_body"),
])
async def test_read_only_is_derived_from_read_scopes(service, team, scopes, read_only, write_answer):
    created = await create_key(service, team.session, scopes=scopes)
    assert created["read_only"] is read_only
    assert (await whoami(service, created["key"])).json()["key"]["read_only"] is read_only
    assert await service.db.fetchval("SELECT read_only FROM api_keys WHERE id = $1", created["id"]) is read_only
    # A write made with the key: only a read-only key is refused as such.
    response = await service.client.post(KEYS, json={}, headers=bearer(created["key"]))
    assert_stable(response, 400 if write_answer == "invalid_body" else 403, write_answer)


@pytest.mark.parametrize("body, code", [
    (None, "invalid_body"), ("{not json", "invalid_body"), ({"scopes": ["inbox"]}, "invalid_body"),
    ({**NEW, "owner": 1}, "invalid_body"), ({**NEW, "name": ""}, "invalid_name"),
    ({**NEW, "name": "   "}, "invalid_name"), ({**NEW, "name": "x" * 201}, "invalid_name"),
    ({**NEW, "scopes": []}, "invalid_scopes"), ({**NEW, "scopes": ["inbox", "telepathy"]}, "invalid_scopes"),
    ({**NEW, "scopes": ["all", "inbox"]}, "invalid_scopes"), ({**NEW, "expires_in_days": 0}, "invalid_expiry"),
    ({**NEW, "expires_in_days": 731}, "invalid_expiry"), ({**NEW, "rate_limit_per_minute": 9}, "invalid_rate_limit"),
    ({**NEW, "rate_limit_per_minute": 100_001}, "invalid_rate_limit"),
])
async def test_create_refusals_change_nothing(service, team, body, code):
    before = await key_rows(service.db)
    content = body if isinstance(body, str) else None
    response = await service.client.post(KEYS, json=None if content else body, content=content, headers=team.session)
    assert_stable(response, 400, code)
    assert await key_rows(service.db) == before


async def test_create_accepts_the_bounds(service, team):
    for days, limit in ((1, 10), (730, 100_000)):
        created = await create_key(service, team.session, expires_in_days=days, rate_limit_per_minute=limit)
        assert near(created["expires_at"], from_now(days=days)) and created["rate_limit_per_minute"] == limit


async def test_starter_workspace_cannot_create_keys(service):
    starter = await make_team(service.db, plan="starter")  # its key made by the operator, as after a downgrade
    before = await key_rows(service.db)
    assert_stable(await create(service, starter.session), 403, "api_not_in_plan")
    assert_stable(await create(service, starter.admin_key), 403, "api_not_in_plan")
    assert_stable(await service.client.get(KEYS, headers=starter.admin_key), 403, "api_not_in_plan")
    # A rotation creates a key too; revoking the keys a downgrade left behind stays possible.
    assert_stable(await rotate(service, starter.session, starter.key.id), 403, "api_not_in_plan")
    assert await key_rows(service.db) == before
    assert (await revoke(service, starter.session, starter.key.id)).json()["status"] == "revoked"


async def test_growth_admin_key_is_refused_but_growth_admin_session_manages_keys(service):
    growth = await make_team(service.db, plan="growth")
    before = await key_rows(service.db)
    for method, path, body in management_calls(growth.key.id):
        response = await service.client.request(method, path, json=body, headers=growth.admin_key)
        assert_stable(response, 403, "api_access_not_enabled")
    assert await key_rows(service.db) == before

    created = await create_key(service, growth.session)
    answer = await whoami(service, created["key"])
    assert answer.status_code == 200 and answer.json()["api_tier"] == "core"
    renamed = await service.client.patch(f"{KEYS}/{created['id']}", json={"name": "renamed"}, headers=growth.session)
    assert renamed.status_code == 200 and renamed.json()["name"] == "renamed"
    rotated = await rotate(service, growth.session, created["id"])
    assert rotated.status_code == 201
    revoked = await revoke(service, growth.session, rotated.json()["key"]["id"])
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    listed = (await service.client.get(KEYS, headers=growth.session)).json()["data"]
    assert [k["status"] for k in listed] == ["revoked", "rotated", "active"]


# -- the 20-active-keys limit ----------------------------------------------------------------------------------

async def test_a_workspace_holds_at_most_twenty_active_keys(service, team):
    fillers = [await builders.key(service.db, team.workspace_id, team.admin_id) for _ in range(18)]  # 19 active
    last = await create_key(service, team.session)  # the 20th
    before = await key_rows(service.db)
    assert_stable(await create(service, team.session), 409, "key_limit_reached")
    assert_stable(await create(service, team.admin_key), 409, "key_limit_reached")
    assert await key_rows(service.db) == before

    # A rotation replaces a key, so the workspace still holds 20 active keys.
    assert (await rotate(service, team.session, last["id"])).status_code == 201
    assert_stable(await create(service, team.session), 409, "key_limit_reached")
    # A revoked key frees a place, and so does an expired one.
    assert (await revoke(service, team.session, fillers[0].id)).status_code == 200
    await create_key(service, team.session)
    assert_stable(await create(service, team.session), 409, "key_limit_reached")
    await expire(service.db, fillers[1].id)
    await create_key(service, team.session)
    assert_stable(await create(service, team.session), 409, "key_limit_reached")
    listed = await service.client.get(KEYS, params={"status": "active"}, headers=team.session)
    assert len(listed.json()["data"]) == 20


async def test_concurrent_creates_stop_at_twenty(service, team):
    for _ in range(17):  # 18 active
        await builders.key(service.db, team.workspace_id, team.admin_id)
    statuses = []

    async def attempt() -> None:
        statuses.append((await create(service, team.session)).status_code)

    async with trio.open_nursery() as nursery:
        for _ in range(6):
            nursery.start_soon(attempt)
    assert sorted(statuses) == [201, 201, 409, 409, 409, 409]
    assert await service.db.fetchval("SELECT count(*) FROM api_keys WHERE workspace_id = $1", team.workspace_id) == 20


# -- list and show -------------------------------------------------------------------------------------------

async def test_list_is_newest_first_and_filters_by_status(service, team):
    expired = await builders.key(service.db, team.workspace_id, team.admin_id)
    await expire(service.db, expired.id)
    revoked = await create_key(service, team.session)
    await revoke(service, team.session, revoked["id"])
    rotated = await create_key(service, team.session)
    replacement = (await rotate(service, team.session, rotated["id"])).json()["key"]
    retired = await create_key(service, team.session)
    successor = (await rotate(service, team.session, retired["id"], grace_hours=0)).json()["key"]
    expected = {"active": {team.key.id, replacement["id"], successor["id"]}, "expired": {expired.id},
                "revoked": {revoked["id"]}, "rotated": {rotated["id"]}, "retired": {retired["id"]}}

    listed = (await service.client.get(KEYS, headers=team.session)).json()["data"]
    assert [k["id"] for k in listed] == sorted(set().union(*expected.values()), reverse=True)
    for status, wanted in expected.items():
        response = await service.client.get(KEYS, params={"status": status}, headers=team.admin_key)
        assert {k["id"] for k in response.json()["data"]} == wanted, status
        assert {k["status"] for k in response.json()["data"]} == {status}
    assert_stable(await service.client.get(KEYS, params={"status": "lost"}, headers=team.session), 400,
                  "invalid_status")


async def test_keys_of_another_workspace_are_not_found(service, team):
    other = await make_team(service.db)
    before = await key_rows(service.db)
    for key_id in (other.key.id, 987654):
        for method, path, body in management_calls(key_id):
            if path != KEYS:
                response = await service.client.request(method, path, json=body, headers=team.session)
                assert_stable(response, 404, "not_found")
    assert await key_rows(service.db) == before
    assert [k["id"] for k in (await service.client.get(KEYS, headers=team.session)).json()["data"]] == [team.key.id]
    assert (await whoami(service, other.key.key)).status_code == 200


# -- expiry --------------------------------------------------------------------------------------------------

async def test_a_key_past_its_expiry_is_refused_with_key_expired(service, team):
    created = await create_key(service, team.session, expires_in_days=1)
    assert (await whoami(service, created["key"])).status_code == 200
    await expire(service.db, created["id"])
    assert_stable(await eventually_status(service, WHOAMI, created["key"], 403), 403, "key_expired")
    assert (await service.client.get(f"{KEYS}/{created['id']}", headers=team.session)).json()["status"] == "expired"
    before = await key_rows(service.db)
    assert_stable(await service.client.patch(f"{KEYS}/{created['id']}", json={"expires_in_days": 30},
                                             headers=team.session), 409, "key_not_active")
    assert_stable(await rotate(service, team.session, created["id"]), 409, "key_not_active")
    assert await key_rows(service.db) == before
    assert_stable(await whoami(service, created["key"]), 403, "key_expired")


# -- edit ----------------------------------------------------------------------------------------------------

async def test_edit_changes_name_expiry_and_limit_but_not_scopes(service, team):
    created = await create_key(service, team.admin_key, name="old", scopes=["inbox", "analytics"],
                               rate_limit_per_minute=50)

    async def edit(body: dict) -> dict:
        response = await service.client.patch(f"{KEYS}/{created['id']}", json=body, headers=team.admin_key)
        assert response.status_code == 200, response.text
        view = response.json()
        assert "key" not in view and view["status"] == "active" and view["scopes"] == created["scopes"]
        return view

    assert (await edit({"name": "new"}))["name"] == "new"
    assert near((await edit({"expires_in_days": 10}))["expires_at"], from_now(days=10))
    assert (await edit({"expires_in_days": None}))["expires_at"] is None
    assert (await edit({"rate_limit_per_minute": 10}))["rate_limit_per_minute"] == 10
    assert (await whoami(service, created["key"])).headers["X-RateLimit-Limit"] == "10"
    assert (await edit({"rate_limit_per_minute": None}))["rate_limit_per_minute"] is None
    assert (await whoami(service, created["key"])).headers["X-RateLimit-Limit"] == "600"
    row = await service.db.fetchrow("SELECT * FROM api_keys WHERE id = $1", created["id"])
    assert (row["name"], row["expires_at"], row["rate_limit_per_minute"]) == ("new", None, None)
    assert sorted(row["scopes"]) == ["analytics", "inbox"]


async def test_an_edited_limit_applies_from_the_next_call(service, team):
    created = await create_key(service, team.session, rate_limit_per_minute=10)
    for _ in range(10):
        assert (await whoami(service, created["key"])).status_code == 200
    assert_stable(await whoami(service, created["key"]), 429, "rate_limited")
    edited = await service.client.patch(f"{KEYS}/{created['id']}", json={"rate_limit_per_minute": None},
                                        headers=team.session)
    assert edited.status_code == 200
    assert (await whoami(service, created["key"])).status_code == 200


@pytest.mark.parametrize("body, code", [
    ({"scopes": ["all"]}, "invalid_scopes"), ({"name": "renamed", "scopes": ["inbox"]}, "invalid_scopes"),
    ({"name": "  "}, "invalid_name"), ({"expires_in_days": 0}, "invalid_expiry"),
    ({"expires_in_days": 731}, "invalid_expiry"), ({"rate_limit_per_minute": 9}, "invalid_rate_limit"),
    ({"rate_limit_per_minute": 100_001}, "invalid_rate_limit"), ({"colour": "red"}, "invalid_body"),
    (None, "invalid_body"),
])
async def test_edit_refusals_change_nothing(service, team, body, code):
    created = await create_key(service, team.session, name="kept", rate_limit_per_minute=50)
    before = await key_rows(service.db)
    assert_stable(await service.client.patch(f"{KEYS}/{created['id']}", json=body, headers=team.session), 400, code)
    assert await key_rows(service.db) == before


async def test_only_an_active_key_can_be_edited_or_rotated(service, team):
    revoked = await create_key(service, team.session)
    await revoke(service, team.session, revoked["id"])
    rotated = await create_key(service, team.session)
    await rotate(service, team.session, rotated["id"])
    before = await key_rows(service.db)
    for key_id in (revoked["id"], rotated["id"]):
        response = await service.client.patch(f"{KEYS}/{key_id}", json={"name": "x"}, headers=team.session)
        assert_stable(response, 409, "key_not_active")
        assert_stable(await rotate(service, team.session, key_id), 409, "key_not_active")
    assert await key_rows(service.db) == before


# -- rotate --------------------------------------------------------------------------------------------------

async def test_rotation_issues_a_replacement_and_the_old_key_works_until_grace_ends(service, team):
    old = await create_key(service, team.admin_key, name="billing", scopes=["analytics:read", "inbox"],
                           rate_limit_per_minute=100)
    response = await service.client.post(f"{KEYS}/{old['id']}/rotate", headers=team.admin_key)  # no body
    assert response.status_code == 201, response.text
    new, previous = response.json()["key"], response.json()["previous"]
    assert KEY_SHAPE.fullmatch(new["key"]) and new["key"] != old["key"] and new["id"] != old["id"]
    for field in ("name", "scopes", "read_only", "rate_limit_per_minute"):
        assert new[field] == old[field], field
    assert new["status"] == "active" and set(previous) == VIEW_FIELDS
    assert (previous["id"], previous["status"], previous["replaced_by"]) == (old["id"], "rotated", new["id"])
    assert near(previous["grace_until"], from_now(hours=24))
    stored = await service.db.fetchval("SELECT key_hash FROM api_keys WHERE id = $1", new["id"])
    assert bytes(stored) == hashlib.sha256(new["key"].encode()).digest()

    for key, key_id in ((old["key"], old["id"]), (new["key"], new["id"])):
        answer = await whoami(service, key)
        assert answer.status_code == 200 and answer.json()["key"]["id"] == key_id
        assert answer.headers["X-RateLimit-Limit"] == "100"

    await service.db.execute("UPDATE api_keys SET grace_until = now() - interval '1 second' WHERE id = $1", old["id"])
    assert (await eventually_status(service, WHOAMI, old["key"], 403)).json() == INVALID_KEY
    assert (await whoami(service, new["key"])).status_code == 200
    assert (await service.client.get(f"{KEYS}/{old['id']}", headers=team.session)).json()["status"] == "retired"


async def test_rotation_with_zero_grace_stops_the_old_key_at_once(service, team):
    old = await create_key(service, team.session)
    assert (await whoami(service, old["key"])).status_code == 200
    response = await rotate(service, team.session, old["id"], grace_hours=0)
    assert response.status_code == 201 and response.json()["previous"]["status"] == "retired"
    assert (await whoami(service, old["key"])).json() == INVALID_KEY
    assert (await whoami(service, response.json()["key"]["key"])).status_code == 200

    longest = await create_key(service, team.session)
    response = await rotate(service, team.session, longest["id"], grace_hours=168)
    assert near(response.json()["previous"]["grace_until"], from_now(hours=168))


@pytest.mark.parametrize("body, code", [
    ({"grace_hours": 169}, "invalid_grace_hours"), ({"grace_hours": -1}, "invalid_grace_hours"),
    ({"grace_hours": "soon"}, "invalid_body"), ({"grace": 1}, "invalid_body"),
])
async def test_rotation_refusals_change_nothing(service, team, body, code):
    created = await create_key(service, team.session)
    before = await key_rows(service.db)
    assert_stable(await rotate(service, team.session, created["id"], **body), 400, code)
    assert await key_rows(service.db) == before
    assert (await whoami(service, created["key"])).status_code == 200


# -- revoke --------------------------------------------------------------------------------------------------

async def test_revocation_is_immediate_final_and_idempotent(service, team):
    created = await create_key(service, team.session)
    assert (await whoami(service, created["key"])).status_code == 200  # the credential is now cached
    first = await revoke(service, team.admin_key, created["id"])
    assert first.status_code == 200 and first.json()["status"] == "revoked" and first.json()["revoked_at"]
    refused = await whoami(service, created["key"])
    assert (refused.status_code, refused.json()) == (403, INVALID_KEY)

    before = await key_rows(service.db)
    again = await revoke(service, team.session, created["id"])
    assert again.status_code == 200  # the same view (last_used_at follows the activity log, asynchronously)
    assert {**again.json(), "last_used_at": None} == {**first.json(), "last_used_at": None}
    assert await key_rows(service.db) == before


async def test_revoking_a_rotated_key_stops_it_before_its_grace_ends(service, team):
    old = await create_key(service, team.session)
    rotation = (await rotate(service, team.session, old["id"])).json()
    assert (await whoami(service, old["key"])).status_code == 200
    assert (await revoke(service, team.session, old["id"])).json()["status"] == "revoked"
    assert (await whoami(service, old["key"])).json() == INVALID_KEY
    assert (await whoami(service, rotation["key"]["key"])).status_code == 200


# -- activity ------------------------------------------------------------------------------------------------

async def test_activity_lists_every_call_of_the_key_refused_ones_included(service, team):
    created = await create_key(service, team.session, scopes=["inbox"])
    auth = bearer(created["key"])
    assert (await whoami(service, created["key"])).status_code == 200
    assert (await service.client.get(KEYS, headers=auth)).status_code == 403
    assert (await service.client.post(KEYS, json={}, headers=auth)).status_code == 403
    await revoke(service, team.admin_key, created["id"])
    assert (await whoami(service, created["key"])).status_code == 403
    await activity_log.wait_recorded(service.actors)

    response = await service.client.get(f"{KEYS}/{created['id']}/activity", headers=team.session)
    assert response.status_code == 200
    page = response.json()
    assert (page["key_id"], page["days"], page["next_cursor"]) == (created["id"], 7, None)
    assert [(a["method"], a["path"], a["status"]) for a in page["data"]] == [
        ("GET", WHOAMI, 403), ("POST", KEYS, 403), ("GET", KEYS, 403), ("GET", WHOAMI, 200)]
    assert all(a["ip"] == "127.0.0.1" and near(a["at"], from_now()) for a in page["data"])
    assert created["key"] not in response.text
    shown = (await service.client.get(f"{KEYS}/{created['id']}", headers=team.session)).json()
    assert created["last_used_at"] is None and near(shown["last_used_at"], from_now())


async def test_activity_pages_and_windows(service, team):
    created = await create_key(service, team.session, scopes=["inbox"])
    for n in range(1, 7):
        await service.client.get(f"{KEYS}/{n}", headers=bearer(created["key"]))  # refused, still recorded
    await activity_log.wait_recorded(service.actors)
    for n, age in ((1, "40 days"), (2, "10 days")):
        await service.db.execute(f"UPDATE key_activity SET at = now() - interval '{age}' WHERE key_id = $1"
                                 f" AND path = '{KEYS}/{n}'", created["id"])

    async def paths(**params) -> tuple[list[str], str | None]:
        response = await service.client.get(f"{KEYS}/{created['id']}/activity", params=params, headers=team.admin_key)
        assert response.status_code == 200, response.text
        return [a["path"] for a in response.json()["data"]], response.json()["next_cursor"]

    assert await paths() == ([f"{KEYS}/{n}" for n in (6, 5, 4, 3)], None)
    everything = [f"{KEYS}/{n}" for n in (6, 5, 4, 3, 2)]
    assert await paths(days=30, limit=200) == (everything, None)
    seen, cursor = await paths(days=30, limit=2)
    pages = 1
    while cursor is not None:
        more, cursor = await paths(days=30, limit=2, cursor=cursor)
        seen, pages = seen + more, pages + 1
    assert (seen, pages) == (everything, 3)


@pytest.mark.parametrize("params, code", [
    ({"days": 14}, "invalid_days"), ({"days": "week"}, "invalid_days"),
    ({"limit": 0}, "invalid_limit"), ({"limit": 201}, "invalid_limit"), ({"limit": "many"}, "invalid_limit"),
    ({"cursor": "!!!"}, "invalid_cursor"), ({"cursor": "Zm9v"}, "invalid_cursor"),
])
async def test_activity_parameter_refusals(service, team, params, code):
    response = await service.client.get(f"{KEYS}/{team.key.id}/activity", params=params, headers=team.session)
    assert_stable(response, 400, code)


# -- who may manage keys -------------------------------------------------------------------------------------

@pytest.mark.parametrize("scopes", [("settings",), ("inbox", "contacts"), ("settings:read",)])
async def test_a_scoped_admin_key_gets_scope_denied(service, team, scopes):
    scoped = await builders.key(service.db, team.workspace_id, team.admin_id, scopes=scopes)
    before = await key_rows(service.db)
    calls = management_calls(scoped.id)
    for method, path, body in calls[:3] if scoped.read_only else calls:  # a read-only key's writes: read_only_key
        response = await service.client.request(method, path, json=body, headers=bearer(scoped.key))
        refusal = assert_stable(response, 403, "scope_denied")
        assert refusal["requiredPermission"] == "all" and sorted(refusal["keyScopes"]) == sorted(scopes)
    assert await key_rows(service.db) == before


@pytest.mark.parametrize("via", ["key", "session"])
@pytest.mark.parametrize("permissions, may_read", [
    (["settings"], True), (["settings:read", "inbox"], True), (["inbox", "contacts"], False)])
async def test_a_non_admin_reads_keys_only_with_the_settings_permission(service, team, via, permissions, may_read):
    agent_id = await builders.member(service.db, team.workspace_id, role="agent", permissions=permissions)
    if via == "key":  # a full-access key the agent created
        auth = bearer((await builders.key(service.db, team.workspace_id, agent_id)).key)
    else:
        auth = await session_of(service.db, agent_id)
    before = await key_rows(service.db)
    for n, (method, path, body) in enumerate(management_calls(team.key.id)):
        response = await service.client.request(method, path, json=body, headers=auth)
        if n < 3 and may_read:
            assert response.status_code == 200, (method, path, response.text)
        else:
            assert_stable(response, 403, "admin_required")
    assert await key_rows(service.db) == before


async def test_session_refusals(service, team):
    unknown = bearer(f"session_{secrets.token_urlsafe(32)}")
    expired = await session_of(service.db, team.admin_id, hours=1, expired=True)
    suspended_id = await builders.member(service.db, team.workspace_id)
    suspended = await session_of(service.db, suspended_id)
    await accounts.set_member_status(service.db, member_id=suspended_id, status="suspended")
    before = await key_rows(service.db)
    for method, path, body in management_calls(team.key.id):
        for auth in (unknown, expired):
            assert_stable(await service.client.request(method, path, json=body, headers=auth), 401, "invalid_session")
        response = await service.client.request(method, path, json=body, headers=suspended)
        assert_stable(response, 403, "account_suspended")
        response = await service.client.request(method, path, json=body)
        assert (response.status_code, response.json()) == (401, {"error": "Unauthorized: No token provided"})
    assert await key_rows(service.db) == before
