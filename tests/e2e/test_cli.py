"""The `inbox-actors` command line, run as a separate process against the test database."""

import json
import os
import subprocess
import sys

import pytest
import trio

from inbox_actors.domain.api_keys import hash_key


async def cli(database_url: str, *args: str, stdin: bytes = b"",
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DATABASE_URL": database_url, **(env or {})}
    return await trio.run_process([sys.executable, "-m", "inbox_http.cli", *args], env=environment, stdin=stdin,
                                  capture_stdout=True, capture_stderr=True, check=False)


def output(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.decode().strip().splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


async def test_operator_sets_up_a_workspace_end_to_end(db, database_url):
    workspace = output(await cli(database_url, "workspace", "create", "--name", "Acme", "--plan", "growth",
                                 "--phone-number-id", "1234567890"))
    assert workspace == {"workspace_id": workspace["workspace_id"], "phone_number_id": "1234567890"}
    ws = str(workspace["workspace_id"])

    member = output(await cli(database_url, "member", "add", "--workspace", ws, "--name", "Ann", "--email",
                              "ann@example.com", "--role", "admin"))
    assert set(member) == {"user_id"}

    key = output(await cli(database_url, "key", "create", "--workspace", ws, "--member", str(member["user_id"]),
                           "--name", "zapier", "--scopes", "inbox:read,contacts:read", "--expires-in-days", "30",
                           "--rate-limit", "120"))
    assert key["scopes"] == ["contacts:read", "inbox:read"]
    assert key["read_only"] is True
    assert key["key"].startswith("inbox_")
    stored = await db.fetchrow("SELECT * FROM api_keys WHERE id = $1", key["id"])
    assert bytes(stored["key_hash"]) == hash_key(key["key"])
    assert stored["rate_limit_per_minute"] == 120

    assert output(await cli(database_url, "workspace", "set-plan", "--workspace", ws, "--plan", "starter")) == {
        "workspace_id": workspace["workspace_id"], "plan": "starter"}
    # A downgrade keeps keys; the CLI still issues keys on any plan.
    assert await db.fetchval("SELECT revoked_at FROM api_keys WHERE id = $1", key["id"]) is None
    assert output(await cli(database_url, "key", "create", "--workspace", ws, "--member", str(member["user_id"]),
                            "--name", "ops", "--scopes", "all"))["read_only"] is False

    suspended = output(await cli(database_url, "member", "set-status", "--member", str(member["user_id"]),
                                 "--status", "suspended"))
    assert suspended == {"user_id": member["user_id"], "status": "suspended"}


async def test_migrate_reports_the_schema_version(database_url):
    result = output(await cli(database_url, "migrate"))
    assert result["schema_version"] == result["migrations"] >= 1


@pytest.mark.parametrize("args, message", [
    (["workspace", "create", "--name", "X", "--plan", "gold"], "invalid choice"),
    (["workspace", "create", "--plan", "scale"], "--name"),
    (["workspace", "set-plan", "--workspace", "abc", "--plan", "scale"], "invalid int"),
    (["workspace", "set-plan", "--workspace", "999999", "--plan", "scale"], "no workspace 999999"),
    (["member", "add", "--workspace", "999999", "--name", "A", "--role", "admin"], "no workspace"),
    (["member", "add", "--workspace", "1", "--name", "A", "--role", "owner"], "invalid choice"),
    (["key", "create", "--workspace", "1", "--member", "1", "--name", "k", "--scopes", "bogus"], "unknown scope"),
    (["key", "create", "--workspace", "1", "--member", "1", "--name", "k", "--scopes", "all",
      "--expires-in-days", "0"], "expiry must be 1 to 730 days"),
    (["key", "create", "--workspace", "1", "--member", "1", "--name", "k", "--scopes", "all",
      "--rate-limit", "5"], "rate limit must be 10 to 100,000"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
async def test_bad_arguments_exit_2_and_write_nothing(db, database_url, args, message):
    workspace_id = (await db.fetchrow(
        "INSERT INTO workspaces (name, plan, phone_number_id) VALUES ('W', 'scale', '1') RETURNING id"))["id"]
    await db.execute("INSERT INTO members (workspace_id, name, role, permissions) VALUES ($1, 'M', 'admin', '{all}')",
                     workspace_id)
    before = await db.fetchval("SELECT (SELECT count(*) FROM workspaces) + (SELECT count(*) FROM members)"
                               " + (SELECT count(*) FROM api_keys)")
    result = await cli(database_url, *args)
    assert result.returncode == 2
    assert result.stdout == b""
    assert message in result.stderr.decode()
    after = await db.fetchval("SELECT (SELECT count(*) FROM workspaces) + (SELECT count(*) FROM members)"
                              " + (SELECT count(*) FROM api_keys)")
    assert after == before


async def test_unreachable_database_exits_1(asyncio_loop):
    result = await cli("postgresql://nobody@127.0.0.1:1/none", "migrate")
    assert result.returncode == 1
    assert "cannot connect to PostgreSQL" in result.stderr.decode()


async def test_session_create_issues_a_token_stored_only_as_its_hash(db, database_url):
    workspace = output(await cli(database_url, "workspace", "create", "--name", "S", "--plan", "growth"))
    member = output(await cli(database_url, "member", "add", "--workspace", str(workspace["workspace_id"]),
                              "--name", "Ann", "--role", "admin"))
    session = output(await cli(database_url, "session", "create", "--member", str(member["user_id"]),
                               "--hours", "2"))
    assert session["user_id"] == member["user_id"]
    assert session["token"].startswith("session_")
    stored = await db.fetchrow("SELECT * FROM member_sessions")
    assert bytes(stored["token_hash"]) == hash_key(session["token"])
    assert session["token"] not in str(dict(stored))

    for args, message in ((["--member", "999999"], "no member"), (["--member", str(member["user_id"]), "--hours",
                                                                     "0"], "1 to 720 hours")):
        refused = await cli(database_url, "session", "create", *args)
        assert refused.returncode == 2 and message in refused.stderr.decode()
    assert await db.fetchval("SELECT count(*) FROM member_sessions") == 1


async def test_sla_and_cloud_api_switch(db, database_url):
    created = output(await cli(database_url, "workspace", "create", "--name", "Ops", "--plan", "scale"))
    workspace = str(created["workspace_id"])
    sla = output(await cli(database_url, "workspace", "set-sla", "--workspace", workspace, "--seconds", "900"))
    assert sla == {"workspace_id": created["workspace_id"], "sla_seconds": 900}
    off = output(await cli(database_url, "workspace", "set-cloud-api", "--workspace", workspace, "--enabled", "off"))
    assert off["cloud_api_enabled"] is False
    cleared = output(await cli(database_url, "workspace", "set-sla", "--workspace", workspace))
    assert cleared["sla_seconds"] is None
    bad = await cli(database_url, "workspace", "set-sla", "--workspace", workspace, "--seconds", "0")
    assert bad.returncode == 2 and b"SLA" in bad.stderr
    row = await db.fetchrow("SELECT sla_seconds, cloud_api_enabled FROM workspaces WHERE id = $1",
                            created["workspace_id"])
    assert row["sla_seconds"] is None and row["cloud_api_enabled"] is False
