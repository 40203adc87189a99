"""The spec's key lifecycle on trio's clock: expiry, rotation grace and revocation as the auth ladder sees them.

The clock is a MockClock moved by hand (`mock_clock.jump`), never autojumped: database I/O must not make time
leap. The service clock follows trio's, so a jump of a day is a day for expiry and grace.
"""

from datetime import timedelta

import pytest

from inbox_actors.access.activity_log import RETENTION, prune_expired_activity
from inbox_actors.access.credentials import CredentialCache
from inbox_actors.access.key_ring import (
    CreateKey,
    EditKey,
    KeyRefusal,
    RevokeKey,
    RotateKey,
    change_keys,
    key_ring_kind,
)
from inbox_actors.domain.auth_ladder import INVALID_KEY, RoutePolicy, check_access
from inbox_actors.domain.plans import ApiTier
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import TrioWallClock
from tests import builders

ANY_CORE = RoutePolicy(tier=ApiTier.CORE)


@pytest.fixture
async def world(db, mock_clock, nursery):
    clock = TrioWallClock()
    credentials = CredentialCache(db)
    actors = ActorSystem([key_ring_kind(db, clock, credentials)])
    await nursery.start(actors.run)
    workspace_id = await builders.workspace(db)
    admin_id = await builders.member(db, workspace_id)

    class World:
        async def create(self, **options):
            return await change_keys(actors, workspace_id, CreateKey(created_by=admin_id, name="k",
                                                                     scopes=["all"], **options))

        async def change(self, message):
            return await change_keys(actors, workspace_id, message)

        async def verdict(self, plaintext: str):
            credential = await credentials.lookup(plaintext)
            refusal = check_access(credential, ANY_CORE, "GET", clock.now())
            return "ok" if refusal is None else refusal.error

    world = World()
    world.clock, world.db = clock, db
    yield world
    await actors.shutdown(1)


async def test_expiry_passes_with_the_clock(world, mock_clock):
    issued = await world.create(expires_in_days=1)
    assert await world.verdict(issued.key) == "ok"
    mock_clock.jump(24 * 3600 - 1)
    assert await world.verdict(issued.key) == "ok"
    mock_clock.jump(1)
    assert await world.verdict(issued.key) == "key_expired"


async def test_rotation_keeps_the_old_key_for_the_grace_period_then_stops_it(world, mock_clock):
    old = await world.create(rate_limit_per_minute=120)
    rotation = await world.change(RotateKey(key_id=old.id, grace_hours=2))
    assert (rotation.key.name, rotation.key.scopes, rotation.key.rate_limit_per_minute) == ("k", ["all"], 120)
    assert rotation.previous.status == "rotated"
    assert await world.verdict(old.key) == "ok"
    assert await world.verdict(rotation.key.key) == "ok"
    mock_clock.jump(2 * 3600)
    assert await world.verdict(old.key) == INVALID_KEY.error
    assert await world.verdict(rotation.key.key) == "ok"
    # The rotated key cannot be rotated or edited again.
    again = await world.change(RotateKey(key_id=old.id))
    assert isinstance(again, KeyRefusal) and again.error == "key_not_active"


async def test_grace_is_at_most_168_hours(world):
    issued = await world.create()
    refusal = await world.change(RotateKey(key_id=issued.id, grace_hours=169))
    assert (refusal.status, refusal.error) == (400, "invalid_grace_hours")
    assert await world.verdict(issued.key) == "ok"


async def test_revocation_is_immediate_and_final(world):
    issued = await world.create()
    assert await world.verdict(issued.key) == "ok"  # now cached
    revoked = await world.change(RevokeKey(key_id=issued.id))
    assert revoked.status == "revoked"
    assert await world.verdict(issued.key) == INVALID_KEY.error
    edit = await world.change(EditKey(key_id=issued.id, name="back"))
    assert isinstance(edit, KeyRefusal) and edit.error == "key_not_active"


async def test_edit_moves_expiry_from_now(world, mock_clock):
    issued = await world.create(expires_in_days=1)
    mock_clock.jump(12 * 3600)
    edited = await world.change(EditKey(key_id=issued.id, expires_in_days=2))
    assert edited.expires_at == world.clock.now() + timedelta(days=2)
    mock_clock.jump(36 * 3600)
    assert await world.verdict(issued.key) == "ok"
    cleared = await world.change(EditKey(key_id=issued.id, expires_in_days=None))
    assert cleared.expires_at is None


async def test_activity_older_than_30_days_is_pruned(world):
    """By PostgreSQL's clock, which every node shares: the rows' ages are set in the database, and a day passing is
    the rows growing a day older there."""
    issued = await world.create()
    for age in (timedelta(days=31), timedelta(days=29), timedelta(hours=1)):
        await world.db.execute(
            "INSERT INTO key_activity (key_id, workspace_id, method, path, status, ip, at)"
            " SELECT id, workspace_id, 'GET', '/x', 200, '127.0.0.1', now() - $2::interval FROM api_keys"
            " WHERE id = $1", issued.id, age)
    assert await prune_expired_activity(world.db) == 1
    await world.db.execute("UPDATE key_activity SET at = at - $1::interval", timedelta(days=1, minutes=1))
    assert await prune_expired_activity(world.db) == 1
    remaining = await world.db.fetchval("SELECT array_agg(now() - at) FROM key_activity")
    assert len(remaining) == 1 and remaining[0] < RETENTION
