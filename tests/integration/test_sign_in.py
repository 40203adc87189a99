"""Signing in to the web app by email and password, signing out, and one-time links that set a password, against
a real PostgreSQL and the real rate bucket actors."""

from datetime import datetime, timedelta, timezone

import pytest

from inbox_actors.access import accounts, invites, passwords, sign_in
from inbox_actors.access.demo_workspace import seed_demo
from inbox_actors.access.invites import InviteError, accept_invite, invite_member, invite_status
from inbox_actors.access.rate_bucket import NodeAddresses
from inbox_actors.access.sessions import find_session
from inbox_actors.access.sign_in import SignedIn, sign_out
from inbox_actors.domain import auth_ladder
from inbox_actors.domain.api_keys import hash_key
from inbox_actors.domain.team_audit import OPERATOR
from inbox_actors.team import roster
from tests import builders

PASSWORD = "correct horse battery"


def now() -> datetime:
    return datetime.now(timezone.utc)


async def member_with_password(db, workspace_id: int, email: str, password: str = PASSWORD,
                               role: str = "admin") -> int:
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name=email.split("@")[0], role=role,
                                          email=email)
    await accounts.set_member_password(db, member_id=member_id, password=password)
    return member_id


async def attempt(db, bucket_actors, email: str, password: str = PASSWORD, ip: str = "192.0.2.1"):
    return await sign_in.sign_in(db, NodeAddresses(bucket_actors), email=email, password=password, ip=ip, now=now())


async def test_right_password_opens_a_web_session(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    member_id = await member_with_password(db, workspace_id, "ann@example.com")
    started = now()
    signed = await sign_in.sign_in(db, NodeAddresses(bucket_actors), email="  Ann@Example.COM ", password=PASSWORD,
                                   ip="192.0.2.1", now=started)
    assert isinstance(signed, SignedIn)
    assert (signed.member_id, signed.workspace_id) == (member_id, workspace_id)
    assert signed.token.startswith("session_")
    # By PostgreSQL's clock, which judges it; the test's clock and the database's are the machine's.
    assert abs(signed.expires_at - (started + timedelta(hours=sign_in.WEB_SESSION_HOURS))) < timedelta(minutes=1)
    session = await find_session(db, signed.token)
    assert (session.member_id, session.member_status) == (member_id, "active")
    stored = await db.fetchrow("SELECT * FROM member_sessions")
    assert bytes(stored["token_hash"]) == hash_key(signed.token)
    password_hash = await db.fetchval("SELECT password_hash FROM members WHERE id = $1", member_id)
    assert password_hash.startswith("$argon2id$") and PASSWORD not in password_hash


async def test_wrong_password_and_unknown_email_get_the_same_answer(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    await member_with_password(db, workspace_id, "ann@example.com")
    await accounts.add_member(db, workspace_id=workspace_id, name="No password yet", role="agent",
                              email="bob@example.com")
    wrong = await attempt(db, bucket_actors, "ann@example.com", "correct horse batterY")
    unknown = await attempt(db, bucket_actors, "nobody@example.com")
    never_set = await attempt(db, bucket_actors, "bob@example.com")
    assert wrong == unknown == never_set == sign_in.WRONG_CREDENTIALS
    assert (wrong.status, wrong.code, wrong.retry_after_seconds) == (401, "wrong_credentials", None)
    assert "email" in wrong.message and "password" in wrong.message
    assert await db.fetchval("SELECT count(*) FROM member_sessions") == 0


@pytest.mark.parametrize("email, password, message", [
    ("", PASSWORD, "email"),
    ("not-an-email", PASSWORD, "email"),
    ("a@" + "x" * 320, PASSWORD, "email"),
    ("ann@example.com", "", "password"),
    ("ann@example.com", "x" * 201, "at most 200"),
])
async def test_bad_input_is_400(db, bucket_actors, email, password, message):
    refusal = await attempt(db, bucket_actors, email, password)
    assert (refusal.status, refusal.code) == (400, "invalid_input")
    assert message in refusal.message


@pytest.mark.parametrize("change", ["suspend", "remove"])
async def test_inactive_member_with_the_right_password_is_403(db, bucket_actors, change):
    workspace_id = await builders.workspace(db)
    admin_id = await builders.member(db, workspace_id)
    member_id = await member_with_password(db, workspace_id, "ann@example.com", role="agent")
    if change == "suspend":
        await roster.set_status(db, workspace_id, admin_id, OPERATOR, member_id, "suspended", now())
    else:
        await roster.remove(db, bucket_actors, workspace_id, admin_id, OPERATOR, member_id, now())
    refusal = await attempt(db, bucket_actors, "ann@example.com")
    assert (refusal.status, refusal.code) == (403, "member_inactive")
    assert ("suspended" if change == "suspend" else "removed") in refusal.message
    # A wrong password tells nothing of the account's standing.
    assert await attempt(db, bucket_actors, "ann@example.com", "wrong horse battery") == sign_in.WRONG_CREDENTIALS


async def test_an_email_in_several_workspaces_signs_in_where_its_password_matches(db, bucket_actors):
    first, second, third = [await builders.workspace(db) for _ in range(3)]
    await member_with_password(db, first, "ann@example.com", "first workspace's password")
    in_second = await member_with_password(db, second, "ANN@example.com", PASSWORD)
    in_third = await member_with_password(db, third, "ann@example.com", PASSWORD)
    signed = await attempt(db, bucket_actors, "ann@example.com")
    assert (signed.member_id, signed.workspace_id) == (in_second, second)  # the first by id whose password matches
    await accounts.set_member_status(db, member_id=in_second, status="suspended")
    signed = await attempt(db, bucket_actors, "ann@example.com")  # an active membership wins over a suspended one
    assert (signed.member_id, signed.workspace_id) == (in_third, third)


async def test_too_many_attempts_on_one_account_are_refused_before_the_password_is_checked(db, bucket_actors,
                                                                                              mock_clock,
                                                                                              monkeypatch):
    workspace_id = await builders.workspace(db)
    await member_with_password(db, workspace_id, "ann@example.com")
    await member_with_password(db, workspace_id, "bob@example.com")
    for i in range(sign_in.SIGN_IN_ATTEMPTS_PER_ACCOUNT):
        wrong = await attempt(db, bucket_actors, "ann@example.com", "wrong horse battery", ip=f"198.51.100.{i}")
        assert wrong.code == "wrong_credentials"
    mock_clock.jump(30)
    checks = []
    verify = passwords.verify_in_thread

    async def counted_verify(stored_hash, password):
        checks.append(stored_hash)
        return await verify(stored_hash, password)

    monkeypatch.setattr(passwords, "verify_in_thread", counted_verify)
    # From yet another address, and with the right password: the account's allowance is spent.
    limited = await attempt(db, bucket_actors, "ANN@example.com", ip="203.0.113.7")
    assert checks == []  # refused without spending a password check
    assert (limited.status, limited.code) == (429, "too_many_attempts")
    assert limited.retry_after_seconds == 30 and "30 seconds" in limited.message
    # Another account from another address is untouched.
    assert isinstance(await attempt(db, bucket_actors, "bob@example.com", ip="203.0.113.8"), SignedIn)
    assert len(checks) == 1
    mock_clock.jump(30)
    assert isinstance(await attempt(db, bucket_actors, "ann@example.com", ip="203.0.113.7"), SignedIn)


async def test_too_many_attempts_from_one_address_are_refused(db, bucket_actors, mock_clock):
    workspace_id = await builders.workspace(db)
    await member_with_password(db, workspace_id, "ann@example.com")
    for i in range(sign_in.SIGN_IN_ATTEMPTS_PER_IP):  # spraying guesses over many accounts
        assert (await attempt(db, bucket_actors, f"guess{i}@example.com", ip="192.0.2.66")).code == "wrong_credentials"
    limited = await attempt(db, bucket_actors, "ann@example.com", ip="192.0.2.66")
    assert (limited.status, limited.code, limited.retry_after_seconds) == (429, "too_many_attempts", 60)
    # The account itself was never tried, so from another address it signs in at once.
    assert isinstance(await attempt(db, bucket_actors, "ann@example.com", ip="192.0.2.67"), SignedIn)
    mock_clock.jump(60)
    assert isinstance(await attempt(db, bucket_actors, "ann@example.com", ip="192.0.2.66"), SignedIn)


async def test_sign_out_ends_the_session_for_good(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    await member_with_password(db, workspace_id, "ann@example.com")
    signed = await attempt(db, bucket_actors, "ann@example.com")
    other = await attempt(db, bucket_actors, "ann@example.com")
    await sign_out(db, signed.token, now())
    assert await find_session(db, signed.token) is None
    assert await find_session(db, other.token) is not None  # another device stays signed in
    await sign_out(db, signed.token, now())  # signing out twice, or with what is no token, is no error
    await sign_out(db, "session_unknown", now())
    await sign_out(db, "", now())


async def test_a_suspended_members_existing_session_is_refused_at_once(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    admin_id = await builders.member(db, workspace_id)
    member_id = await member_with_password(db, workspace_id, "ann@example.com", role="agent")
    signed = await attempt(db, bucket_actors, "ann@example.com")
    session = await find_session(db, signed.token)
    assert auth_ladder.check_session_member(session.member_status, session.role, session.permissions,
                                            ("inbox",), "GET") is None

    await roster.set_status(db, workspace_id, admin_id, OPERATOR, member_id, "suspended", now())
    session = await find_session(db, signed.token)
    refusal = auth_ladder.check_session_member(session.member_status, session.role, session.permissions,
                                               ("inbox",), "GET")
    assert (refusal.status, refusal.error) == (403, "account_suspended")
    refusal = auth_ladder.check_session_admin(session.member_status, session.role, session.permissions,
                                              auth_ladder.AdminRule.VIEW)
    assert (refusal.status, refusal.error) == (403, "account_suspended")

    await roster.set_status(db, workspace_id, admin_id, OPERATOR, member_id, "active", now())
    session = await find_session(db, signed.token)  # a suspension blocks; lifting it lets them back
    assert auth_ladder.check_session_member(session.member_status, session.role, session.permissions,
                                            ("inbox",), "GET") is None


async def test_an_invitation_sets_the_password_and_signs_in(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="agent",
                                          email="ann@example.com")
    issued = await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR)
    assert issued.token.startswith("invite_") and issued.path == f"/app/invite/{issued.token}"
    assert (issued.member_id, issued.workspace_id, issued.email) == (member_id, workspace_id, "ann@example.com")
    stored = await db.fetchrow("SELECT * FROM member_invites")
    assert bytes(stored["token_hash"]) == hash_key(issued.token) and stored["created_by"] == OPERATOR
    assert abs(issued.expires_at - (now() + timedelta(hours=72))) < timedelta(minutes=1)

    view = await invite_status(db, issued.token)
    assert (view.member_name, view.email, view.usable, view.reason) == ("Ann", "ann@example.com", True, None)
    assert view.workspace_name.startswith("Workspace")

    weak = await accept_invite(db, token=issued.token, password="short", now=now())
    assert (weak.status, weak.code) == (400, "weak_password") and "10 characters" in weak.message
    assert (await invite_status(db, issued.token)).usable  # a refused password uses nothing up

    signed = await accept_invite(db, token=issued.token, password=PASSWORD, now=now())
    assert isinstance(signed, SignedIn) and signed.member_id == member_id
    assert (await find_session(db, signed.token)).member_id == member_id
    assert (await attempt(db, bucket_actors, "ann@example.com")).member_id == member_id

    used = await invite_status(db, issued.token)
    assert used.usable is False and "already used" in used.reason
    again = await accept_invite(db, token=issued.token, password="another good password", now=now())
    assert again == invites.INVITE_INVALID and (again.status, again.code) == (404, "invite_invalid")
    assert isinstance(await attempt(db, bucket_actors, "ann@example.com"), SignedIn)  # the first password still holds


async def test_an_expired_invitation_is_refused(db):
    workspace_id = await builders.workspace(db)
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="agent",
                                          email="ann@example.com")
    issued = await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR, hours=1)
    # Its hour passes by PostgreSQL's clock, which judges it: the link's expiry is moved into the past there.
    await db.execute("UPDATE member_invites SET expires_at = now() - interval '1 second'")
    assert (await invite_status(db, issued.token)).usable is False
    assert await accept_invite(db, token=issued.token, password=PASSWORD, now=now()) == invites.INVITE_INVALID
    assert await db.fetchval("SELECT password_hash FROM members WHERE id = $1", member_id) is None


async def test_a_new_invitation_ends_the_earlier_one(db):
    workspace_id = await builders.workspace(db)
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="agent",
                                          email="ann@example.com")
    earlier = await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR)
    latest = await invite_member(db, member_id=member_id, now=now(), created_by=f"member:{member_id}")
    assert (await invite_status(db, earlier.token)).usable is False
    assert await accept_invite(db, token=earlier.token, password=PASSWORD, now=now()) == invites.INVITE_INVALID
    assert isinstance(await accept_invite(db, token=latest.token, password=PASSWORD, now=now()), SignedIn)


async def test_a_password_set_anew_ends_the_members_sessions(db, bucket_actors):
    workspace_id = await builders.workspace(db)
    member_id = await member_with_password(db, workspace_id, "ann@example.com")
    before = await attempt(db, bucket_actors, "ann@example.com")
    issued = await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR)
    after = await accept_invite(db, token=issued.token, password="a brand new password", now=now())
    assert await find_session(db, before.token) is None
    assert await find_session(db, after.token) is not None
    await accounts.set_member_password(db, member_id=member_id, password="yet another password")
    assert await find_session(db, after.token) is None
    assert await attempt(db, bucket_actors, "ann@example.com", "a brand new password") == sign_in.WRONG_CREDENTIALS
    assert isinstance(await attempt(db, bucket_actors, "ann@example.com", "yet another password"), SignedIn)


async def test_a_suspended_member_cannot_use_a_link_until_reactivated(db):
    workspace_id = await builders.workspace(db)
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="agent",
                                          email="ann@example.com")
    issued = await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR)
    await accounts.set_member_status(db, member_id=member_id, status="suspended")
    assert (await invite_status(db, issued.token)).usable is False
    refusal = await accept_invite(db, token=issued.token, password=PASSWORD, now=now())
    assert (refusal.status, refusal.code) == (403, "member_inactive")
    await accounts.set_member_status(db, member_id=member_id, status="active")
    assert isinstance(await accept_invite(db, token=issued.token, password=PASSWORD, now=now()), SignedIn)
    await accounts.set_member_status(db, member_id=member_id, status="removed")
    assert (await invite_status(db, issued.token)).usable is False


async def test_invitations_that_cannot_be_issued(db):
    workspace_id = await builders.workspace(db)
    no_email = await accounts.add_member(db, workspace_id=workspace_id, name="Bob", role="agent")
    removed = await accounts.add_member(db, workspace_id=workspace_id, name="Cy", role="agent", email="cy@x.io")
    await accounts.set_member_status(db, member_id=removed, status="removed")
    for member_id, hours, problem in ((999_999, 72, "no member 999999"), (no_email, 72, "no email"),
                                      (removed, 72, "removed"), (removed, 0, "1 to 720 hours"),
                                      (no_email, 721, "1 to 720 hours")):
        with pytest.raises(InviteError, match=problem):
            await invite_member(db, member_id=member_id, now=now(), created_by=OPERATOR, hours=hours)
    assert await db.fetchval("SELECT count(*) FROM member_invites") == 0
    assert await invite_status(db, "invite_unknown") is None
    assert await invite_status(db, "invite_" + "A" * 43) is None
    assert await accept_invite(db, token="nonsense", password=PASSWORD, now=now()) == invites.INVITE_INVALID


async def test_operator_password_rules(db):
    workspace_id = await builders.workspace(db)
    member_id = await member_with_password(db, workspace_id, "ann@example.com")
    no_email = await accounts.add_member(db, workspace_id=workspace_id, name="Bob", role="agent")
    for target, password, problem in ((member_id, "short", "at least 10"), (member_id, " " * 12, "only spaces"),
                                      (999_999, PASSWORD, "no member"), (no_email, PASSWORD, "no email")):
        with pytest.raises(accounts.AccountError, match=problem):
            await accounts.set_member_password(db, member_id=target, password=password)


async def test_the_demo_admin_signs_in_with_a_password_new_on_each_start(db, bucket_actors):
    first = await seed_demo(db)
    assert first.email == "admin@demo.example" and len(first.password) >= 10
    signed = await attempt(db, bucket_actors, first.email, first.password)
    assert (signed.member_id, signed.workspace_id) == (first.user_id, first.workspace_id)
    second = await seed_demo(db)
    assert second.user_id == first.user_id and second.password != first.password
    assert await attempt(db, bucket_actors, first.email, first.password) == sign_in.WRONG_CREDENTIALS
    assert isinstance(await attempt(db, bucket_actors, second.email, second.password), SignedIn)
