import trio

from inbox_actors.access import accounts
from inbox_actors.access.credentials import ACCESS_CHANGED_CHANNEL, CredentialCache
from inbox_actors.domain.plans import Plan
from persistence.database import Database
from tests import builders


async def test_lookup_finds_the_key_and_its_context(db):
    cache = CredentialCache(db)
    issued = await builders.plaintext_key(db, plan="growth", role="agent")
    credential = await cache.lookup(issued.key)
    assert credential.key_id == issued.id
    assert credential.plan is Plan.GROWTH
    assert credential.member_role == "agent"
    assert await cache.lookup(issued.key[:-1] + ("A" if issued.key[-1] != "A" else "B")) is None
    assert await cache.lookup("not-a-key") is None


async def test_second_lookup_is_served_from_memory(db, nursery):
    cache = CredentialCache(db)
    await nursery.start(cache.keep_listening)
    issued = await builders.plaintext_key(db)
    await cache.lookup(issued.key)
    await cache.lookup(issued.key)
    assert (cache.misses, cache.hits) == (1, 1)


async def test_unknown_keys_are_not_remembered(db):
    """A key created right after a failed lookup works at once (created by another process, say)."""
    cache = CredentialCache(db)
    workspace_id = await builders.workspace(db)
    member_id = await builders.member(db, workspace_id)
    issued = await builders.key(db, workspace_id, member_id)
    await db.execute("UPDATE api_keys SET key_hash = sha256('x'::bytea) WHERE id = $1", issued.id)
    assert await cache.lookup(issued.key) is None
    await db.execute("UPDATE api_keys SET key_hash = sha256($2::text::bytea) WHERE id = $1", issued.id, issued.key)
    assert (await cache.lookup(issued.key)).key_id == issued.id


async def test_a_change_made_by_another_connection_is_seen_at_once(db, database_url, nursery):
    cache = CredentialCache(db)
    await nursery.start(cache.keep_listening)
    issued = await builders.plaintext_key(db, plan="scale")
    assert (await cache.lookup(issued.key)).plan is Plan.SCALE
    workspace_id = (await cache.lookup(issued.key)).workspace_id

    other = await Database.connect(database_url, min_size=1, max_size=1)
    try:
        await accounts.set_plan(other, workspace_id=workspace_id, plan="starter")
    finally:
        await other.close()
    with trio.fail_after(5):
        while (await cache.lookup(issued.key)).plan is not Plan.STARTER:
            await trio.sleep(0.01)
    assert cache.misses == 2


async def test_changes_of_last_used_time_do_not_flush_the_cache(db, nursery):
    cache = CredentialCache(db)
    await nursery.start(cache.keep_listening)
    issued = await builders.plaintext_key(db)
    await cache.lookup(issued.key)
    await db.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", issued.id)
    await until_heard_so_far(db, cache)
    misses = cache.misses
    await cache.lookup(issued.key)
    assert cache.misses == misses  # served from memory: the update announced nothing


async def until_heard_so_far(db: Database, cache: CredentialCache) -> None:
    """Returns once `cache` has heard every access change committed before the call: a barrier, not a pause.

    A listening connection gets its notifications in the order their transactions committed, and asyncpg calls
    the cache's callback for each in the order they arrive. So a sentinel NOTIFY committed now, about a
    workspace of its own whose key the cache holds, is acted on (that key is forgotten) only after every
    earlier notification has been.
    """
    sentinel = await builders.plaintext_key(db)
    with trio.fail_after(5):
        while cache.cached(sentinel.key) is None:  # a lookup that races a notification stores nothing: again
            sentinel_workspace = (await cache.lookup(sentinel.key)).workspace_id
    await db.execute("SELECT pg_notify($1, $2)", ACCESS_CHANGED_CHANNEL, str(sentinel_workspace))
    with trio.fail_after(5):
        while cache.cached(sentinel.key) is not None:
            await trio.sleep(0.01)


async def test_nothing_is_cached_while_changes_cannot_be_heard(db, nursery):
    cache = CredentialCache(db)
    issued = await builders.plaintext_key(db)
    await cache.lookup(issued.key)
    await cache.lookup(issued.key)
    assert cache.hits == 0  # not listening yet

    await nursery.start(cache.keep_listening)
    await cache.lookup(issued.key)
    await cache.lookup(issued.key)
    assert cache.hits == 1

    # The listening connection drops (a database restart, a failover): the cache empties and stops caching...
    await db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE application_name = 'inbox-actors listen credentials' AND datname = current_database()")
    with trio.fail_after(5):
        while cache.cached(issued.key) is not None:
            await trio.sleep(0.01)
    # ...until it is back, and then a change made elsewhere is heard again.
    with trio.fail_after(10):
        while True:
            await cache.lookup(issued.key)
            if cache.cached(issued.key) is not None:
                break
            await trio.sleep(0.05)
    workspace_id = (await cache.lookup(issued.key)).workspace_id
    await accounts.set_plan(db, workspace_id=workspace_id, plan="growth")
    with trio.fail_after(5):
        while (await cache.lookup(issued.key)).plan is not Plan.GROWTH:
            await trio.sleep(0.01)
