import trio

from persistence.migrations import available_migrations, migrate

EXPECTED_TABLES = {
    "workspaces", "members", "member_sessions", "api_keys", "key_activity", "contacts", "conversations",
    "messages", "receipts", "conversation_views", "assignment_events", "templates", "bot_answers",
    "idempotent_requests", "webhook_configs", "webhook_outbox", "webhook_attempts", "credit_ledger",
}


async def test_template_database_is_fully_migrated(db):
    versions = [r["version"] for r in await db.fetch("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m.version for m in available_migrations()]
    tables = {r["tablename"] for r in await db.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert EXPECTED_TABLES <= tables


async def test_migrating_again_applies_nothing(db):
    assert await migrate(db) == []


async def test_concurrent_migrations_apply_each_version_once(db):
    await db.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    results = []

    async def run():
        results.append(await migrate(db))

    async with trio.open_nursery() as nursery:
        for _ in range(4):
            nursery.start_soon(run)
    applied = sorted(v for r in results for v in r)
    assert applied == [m.version for m in available_migrations()]
    assert await db.fetchval("SELECT count(*) FROM schema_migrations") == len(applied)


async def test_a_failing_migration_leaves_nothing_behind(db, tmp_path):
    (tmp_path / "001_first.sql").write_text("CREATE TABLE first_table (id int);")
    (tmp_path / "002_broken.sql").write_text("CREATE TABLE half_made (id int); SELECT no_such_function();")
    await db.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    try:
        await migrate(db, tmp_path)
    except Exception as err:
        assert "no_such_function" in str(err)
    else:
        raise AssertionError("the broken migration applied")
    assert await db.fetchval("SELECT array_agg(version) FROM schema_migrations") == [1]
    assert await db.fetchval("SELECT to_regclass('half_made')") is None
