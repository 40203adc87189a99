"""Every call made with a key is recorded, refused and rate-limited ones included; no plaintext key anywhere."""

import logging

import trio

from inbox_actors.access.activity_log import wait_recorded
from persistence.embedded import binaries_dir
from tests import builders
from tests.e2e.conftest import bearer
from tests.waiting import eventually_status

WHOAMI = "/api/reporting/v1/whoami"
ROUTES = "/api/docs/routes"


async def activity(service, key_id: int) -> list:
    await wait_recorded(service.actors)
    return await service.db.fetch(
        "SELECT method, path, status, ip FROM key_activity WHERE key_id = $1 ORDER BY id", key_id)


async def test_n_requests_make_n_rows_whatever_their_answer(service):
    issued = await builders.plaintext_key(service.db, plan="growth", rate_limit_per_minute=10)
    sent = []
    # 8 OK, 2 refused by plan (refusals use none of the allowance), 2 more OK, 3 over the limit of 10.
    for path in [WHOAMI] * 8 + [ROUTES] * 2 + [WHOAMI] * 5:
        response = await service.client.get(path + "?ignored=query", headers=bearer(issued.key))
        sent.append(("GET", path, response.status_code))
    assert [s for _, _, s in sent] == [200] * 8 + [403] * 2 + [200] * 2 + [429] * 3
    rows = await activity(service, issued.id)
    assert [(r["method"], r["path"], r["status"]) for r in rows] == sent
    assert {r["ip"] for r in rows} == {"127.0.0.1"}
    assert await service.db.fetchval("SELECT last_used_at FROM api_keys WHERE id = $1", issued.id) is not None


async def test_concurrent_calls_are_all_recorded(service):
    issued = await builders.plaintext_key(service.db)

    async def calls(n: int):
        for _ in range(n):
            await service.client.get(WHOAMI, headers=bearer(issued.key))

    async with trio.open_nursery() as nursery:
        for _ in range(8):
            nursery.start_soon(calls, 25)
    assert len(await activity(service, issued.id)) == 200


async def test_revoked_and_expired_keys_are_still_recorded(service):
    revoked = await builders.plaintext_key(service.db)
    await service.db.execute("UPDATE api_keys SET revoked_at = now() WHERE id = $1", revoked.id)
    await eventually_status(service, WHOAMI, revoked.key, 403)
    rows = await activity(service, revoked.id)
    assert rows[-1]["status"] == 403


async def test_no_plaintext_key_in_the_database_the_logs_or_the_activity(service, database_url, caplog):
    caplog.set_level(logging.DEBUG)
    issued = await builders.plaintext_key(service.db)
    created = await service.client.post("/api/keys", headers=bearer(issued.key),
                                        json={"name": "second", "scopes": ["inbox:read"]})
    assert created.status_code == 201
    second = created.json()["key"]
    rotated = await service.client.post(f"/api/keys/{created.json()['id']}/rotate", headers=bearer(issued.key),
                                        json={"grace_hours": 1})
    third = rotated.json()["key"]["key"]
    for key in (issued.key, second, third):
        await service.client.get(WHOAMI, headers=bearer(key))
    await service.client.get(f"/api/keys/{created.json()['id']}/activity", headers=bearer(issued.key))
    await wait_recorded(service.actors)

    dump = await trio.run_process([str(binaries_dir() / "pg_dump"), "--data-only", database_url],
                                  capture_stdout=True, capture_stderr=True)
    text = dump.stdout.decode()
    assert "COPY public.api_keys" in text and "COPY public.key_activity" in text
    for key in (issued.key, second, third):
        secret = key.split("_", 1)[1]
        assert secret not in text
        assert secret not in caplog.text
