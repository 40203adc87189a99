"""`inbox-actors member invite` and `member set-password`, run as a separate process against the test database."""

from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

from inbox_actors.access import invites
from inbox_actors.access.passwords import verify_password
from inbox_actors.domain.api_keys import hash_key
from tests.e2e.test_cli import cli, output

PASSWORD = "correct horse battery"


async def member(db, database_url: str, email: str | None = "ann@example.com") -> int:
    workspace = output(await cli(database_url, "workspace", "create", "--name", "Acme", "--plan", "growth"))
    args = ["--email", email] if email is not None else []
    return output(await cli(database_url, "member", "add", "--workspace", str(workspace["workspace_id"]),
                            "--name", "Ann", "--role", "agent", *args))["user_id"]


async def test_member_invite_prints_a_one_time_link_stored_only_as_its_hash(db, database_url):
    user_id = await member(db, database_url)
    without_host = {"INBOX_HOST": "", "INBOX_PORT": ""}
    first = output(await cli(database_url, "member", "invite", "--member", str(user_id), env=without_host))
    assert set(first) == {"user_id", "email", "invite_url", "expires_at"}
    assert (first["user_id"], first["email"]) == (user_id, "ann@example.com")
    url = urlsplit(first["invite_url"])
    assert (url.scheme, url.netloc) == ("http", "127.0.0.1:8080")
    token = url.path.removeprefix("/app/invite/")
    assert url.path == f"/app/invite/{token}" and token.startswith("invite_")
    expires_at = datetime.fromisoformat(first["expires_at"])
    assert abs(expires_at - (datetime.now(timezone.utc) + timedelta(hours=72))) < timedelta(minutes=1)
    stored = await db.fetchrow("SELECT * FROM member_invites")
    assert bytes(stored["token_hash"]) == hash_key(token) and stored["created_by"] == "operator"
    assert token not in str(dict(stored))

    # The service's own address, and an address of the operator's choosing.
    served = output(await cli(database_url, "member", "invite", "--member", str(user_id), "--hours", "2",
                              env={"INBOX_HOST": "10.1.2.3", "INBOX_PORT": "9000"}))
    assert served["invite_url"].startswith("http://10.1.2.3:9000/app/invite/invite_")
    public = output(await cli(database_url, "member", "invite", "--member", str(user_id), "--base-url",
                              "https://inbox.example.com/"))
    assert public["invite_url"].startswith("https://inbox.example.com/app/invite/invite_")
    latest = public["invite_url"].rsplit("/", 1)[1]

    assert (await invites.invite_status(db, token)).usable is False  # each new link ends the earlier ones
    view = await invites.invite_status(db, latest)
    assert (view.member_name, view.usable) == ("Ann", True)


async def test_member_invite_refusals_exit_2_and_write_nothing(db, database_url):
    no_email = await member(db, database_url, email=None)
    for args, message in ((["--member", "999999"], "no member 999999"),
                          (["--member", str(no_email)], "no email address"),
                          (["--member", str(no_email), "--hours", "0"], "1 to 720 hours"),
                          (["--member", str(no_email), "--base-url", "inbox.example.com"], "--base-url"),
                          (["--member", "x"], "invalid int")):
        refused = await cli(database_url, "member", "invite", *args)
        assert refused.returncode == 2 and refused.stdout == b""
        assert message in refused.stderr.decode()
    assert await db.fetchval("SELECT count(*) FROM member_invites") == 0


async def test_member_set_password_reads_stdin_and_refuses_weak_ones(db, database_url):
    user_id = await member(db, database_url)
    session = output(await cli(database_url, "session", "create", "--member", str(user_id)))

    weak = await cli(database_url, "member", "set-password", "--member", str(user_id), stdin=b"short\n")
    assert weak.returncode == 2 and weak.stdout == b"" and b"at least 10 characters" in weak.stderr
    assert await db.fetchval("SELECT password_hash FROM members WHERE id = $1", user_id) is None

    done = output(await cli(database_url, "member", "set-password", "--member", str(user_id),
                            stdin=f"{PASSWORD}\n".encode()))
    assert done == {"user_id": user_id, "password_set": True}
    stored = await db.fetchval("SELECT password_hash FROM members WHERE id = $1", user_id)
    assert verify_password(stored, PASSWORD) and not verify_password(stored, PASSWORD + "\n")
    # A new password ends the member's sessions.
    assert await db.fetchval("SELECT revoked_at FROM member_sessions WHERE token_hash = $1",
                             hash_key(session["token"])) is not None

    missing = await cli(database_url, "member", "set-password", "--member", "999999", stdin=f"{PASSWORD}\n".encode())
    assert missing.returncode == 2 and b"no member 999999" in missing.stderr
