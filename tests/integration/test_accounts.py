from datetime import datetime, timedelta, timezone

import pytest

from inbox_actors.access import accounts
from inbox_actors.domain.api_keys import hash_key
from tests import builders


async def test_workspace_gets_a_unique_phone_number_id(db):
    first = await accounts.create_workspace(db, name="A", plan="growth")
    second = await accounts.create_workspace(db, name="B", plan="growth")
    assert first.phone_number_id != second.phone_number_id
    given = await accounts.create_workspace(db, name="C", plan="scale", phone_number_id="109876")
    assert given.phone_number_id == "109876"
    with pytest.raises(accounts.AccountError, match="belongs to another workspace"):
        await accounts.create_workspace(db, name="D", plan="scale", phone_number_id="109876")


async def test_bad_arguments_write_nothing(db):
    before = await db.fetchval("SELECT count(*) FROM workspaces")
    with pytest.raises(accounts.AccountError, match="plan must be"):
        await accounts.create_workspace(db, name="X", plan="gold")
    with pytest.raises(accounts.AccountError, match="name"):
        await accounts.create_workspace(db, name="  ", plan="scale")
    assert await db.fetchval("SELECT count(*) FROM workspaces") == before


async def test_member_defaults_by_role(db):
    workspace_id = await builders.workspace(db)
    admin = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="admin")
    agent = await accounts.add_member(db, workspace_id=workspace_id, name="Bob", role="agent", assigned_only=True)
    rows = {r["id"]: r for r in await db.fetch("SELECT * FROM members WHERE workspace_id = $1", workspace_id)}
    assert rows[admin]["permissions"] == ["all"]
    assert "inbox" in rows[agent]["permissions"] and "all" not in rows[agent]["permissions"]
    assert rows[agent]["assigned_only"] is True
    with pytest.raises(accounts.AccountError, match="no workspace"):
        await accounts.add_member(db, workspace_id=999_999, name="C", role="agent")
    with pytest.raises(accounts.AccountError, match="role"):
        await accounts.add_member(db, workspace_id=workspace_id, name="C", role="owner")


async def test_key_is_stored_only_as_its_hash(db):
    issued = await builders.plaintext_key(db, scopes=("inbox:read", "contacts:read"), expires_in_days=30,
                                          rate_limit_per_minute=120)
    assert issued.read_only is True
    row = await db.fetchrow("SELECT * FROM api_keys WHERE id = $1", issued.id)
    assert bytes(row["key_hash"]) == hash_key(issued.key)
    dump = " ".join(str(v) for r in await db.fetch("SELECT * FROM api_keys") for v in r.values())
    assert issued.key not in dump and issued.key.split("_", 1)[1] not in dump
    assert row["rate_limit_per_minute"] == 120
    assert abs(row["expires_at"] - (datetime.now(timezone.utc) + timedelta(days=30))) < timedelta(minutes=1)


@pytest.mark.parametrize("options, problem", [
    ({"scopes": ["nope"]}, "unknown scope"),
    ({"expires_in_days": 0}, "expiry"),
    ({"expires_in_days": 731}, "expiry"),
    ({"rate_limit_per_minute": 9}, "rate limit"),
    ({"rate_limit_per_minute": 100_001}, "rate limit"),
])
async def test_key_arguments_are_checked(db, options, problem):
    workspace_id = await builders.workspace(db)
    member_id = await builders.member(db, workspace_id)
    arguments = {"scopes": ["all"], **options}
    with pytest.raises(accounts.AccountError, match=problem):
        await accounts.create_key(db, workspace_id=workspace_id, member_id=member_id, name="k", **arguments)
    assert await db.fetchval("SELECT count(*) FROM api_keys") == 0


async def test_key_creator_must_be_an_active_member_of_the_workspace(db):
    workspace_id = await builders.workspace(db)
    other_workspace = await builders.workspace(db)
    member_id = await builders.member(db, workspace_id)
    with pytest.raises(accounts.AccountError, match="no member"):
        await accounts.create_key(db, workspace_id=other_workspace, member_id=member_id, name="k", scopes=["all"])
    await accounts.set_member_status(db, member_id=member_id, status="suspended")
    with pytest.raises(accounts.AccountError, match="suspended"):
        await accounts.create_key(db, workspace_id=workspace_id, member_id=member_id, name="k", scopes=["all"])


async def test_plan_change(db):
    workspace_id = await builders.workspace(db, "scale")
    change = await accounts.set_plan(db, workspace_id=workspace_id, plan="starter")
    assert (change.workspace_id, change.plan) == (workspace_id, "starter")
    with pytest.raises(accounts.AccountError, match="no workspace"):
        await accounts.set_plan(db, workspace_id=424242, plan="growth")


async def test_removing_a_member_signs_out_their_sessions_for_good(db):
    from inbox_actors.access.sessions import create_session, find_session

    workspace_id = await builders.workspace(db)
    member_id = await builders.member(db, workspace_id)
    token, _ = await create_session(db, member_id=member_id, hours=1)
    await accounts.set_member_status(db, member_id=member_id, status="suspended")
    assert (await find_session(db, token)).member_status == "suspended"  # blocked, not signed out
    await accounts.set_member_status(db, member_id=member_id, status="removed")
    await accounts.set_member_status(db, member_id=member_id, status="active")
    assert await find_session(db, token) is None
