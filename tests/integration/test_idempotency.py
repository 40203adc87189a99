"""Idempotency-Key against the real database: reserve, replay, conflicts, release, takeover, expiry, races."""

from datetime import datetime, timedelta, timezone

import msgspec
import pytest
import trio

from inbox_actors.conversations import idempotency_keys
from inbox_actors.conversations.idempotency_keys import Conflict, InProgress, Replay, Reservation
from inbox_actors.conversations.send_answers import SendVerdict
from inbox_actors.runtime.clock import WallClock
from inbox_actors.use_cases import keyed_sends
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from inbox_http import idempotency
from inbox_http.errors import SentenceError
from persistence.queries import idempotency as key_queries
from tests import builders

NOW = datetime(2026, 11, 21, 10, 0, tzinfo=timezone.utc)
SEND = "/api/send-message"
BODY = b'{"to": "919876543210", "type": "text", "text": "hi"}'
HASH = idempotency.request_hash("POST", SEND, BODY)
FAILED_SEND = {"error": "Message failed to send because more than 24 hours have passed since the customer last "
                        "replied to this number.", "errorCode": 131047, "errorTitle": "Re-engagement message",
               "errorSubcode": None, "errorDetails": None}


async def test_first_use_reserves_then_the_answer_is_replayed(db):
    ws = await builders.workspace(db)
    reservation = await idempotency_keys.replay_or_reserve(db, ws, "k-1", HASH, now=NOW)
    assert isinstance(reservation, Reservation)
    assert await idempotency_keys.replay_or_reserve(db, ws, "k-1", HASH, now=NOW) == InProgress()
    assert await idempotency_keys.remember(db, reservation, 200, {"success": True, "messageId": "wamid.1"})
    again = await idempotency_keys.replay_or_reserve(db, ws, "k-1", HASH, now=NOW + timedelta(hours=1))
    assert again == Replay(status=200, body={"success": True, "messageId": "wamid.1"})


async def test_a_failed_send_is_remembered_too(db):
    ws = await builders.workspace(db)
    reservation = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    await idempotency_keys.remember(db, reservation, 500, FAILED_SEND)
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW) == Replay(500, FAILED_SEND)


async def test_the_same_key_with_another_request_is_a_conflict(db):
    ws = await builders.workspace(db)
    reservation = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    other = idempotency.request_hash("POST", SEND, b'{"to": "919876543210", "text": "bye"}')
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", other, now=NOW) == Conflict()
    await idempotency_keys.remember(db, reservation, 200, {"success": True})
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", other, now=NOW) == Conflict()
    # The conflict changed nothing: the first request's answer stands.
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW) == Replay(200, {"success": True})


async def test_keys_belong_to_their_workspace(db):
    first, second = await builders.workspace(db), await builders.workspace(db)
    assert isinstance(await idempotency_keys.replay_or_reserve(db, first, "shared", HASH, now=NOW), Reservation)
    assert isinstance(await idempotency_keys.replay_or_reserve(db, second, "shared", HASH, now=NOW), Reservation)


async def test_a_released_key_can_be_used_again(db):
    ws = await builders.workspace(db)
    reservation = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    assert await idempotency_keys.release(db, reservation)
    retry = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW + timedelta(seconds=1))
    assert isinstance(retry, Reservation)
    assert not await idempotency_keys.release(db, reservation)  # the old reservation is not the holder any more
    assert not await idempotency_keys.remember(db, reservation, 200, {})
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW) == InProgress()


async def test_an_abandoned_reservation_is_taken_over_by_the_same_request_only(db):
    ws = await builders.workspace(db)
    dead = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    just_before = NOW + idempotency_keys.ABANDONED_AFTER - timedelta(seconds=1)
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=just_before) == InProgress()
    later = NOW + idempotency_keys.ABANDONED_AFTER + timedelta(seconds=1)
    other = idempotency.request_hash("POST", SEND, b"{}")
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", other, now=later) == Conflict()
    takeover = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=later)
    assert isinstance(takeover, Reservation) and takeover.reserved_at == later
    # The process that held it first cannot overwrite the new holder's answer.
    assert not await idempotency_keys.remember(db, dead, 200, {"from": "dead"})
    assert await idempotency_keys.remember(db, takeover, 200, {"from": "retry"})
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=later) == Replay(200, {"from": "retry"})


async def test_keys_expire_after_24_hours(db):
    ws = await builders.workspace(db)
    first = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    await idempotency_keys.remember(db, first, 200, {"n": 1})
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW + timedelta(hours=23, minutes=59)) \
        == Replay(200, {"n": 1})
    other = idempotency.request_hash("POST", SEND, b'{"to": "1"}')
    fresh = await idempotency_keys.replay_or_reserve(db, ws, "k", other, now=NOW + timedelta(hours=24, seconds=1))
    assert isinstance(fresh, Reservation)


async def test_prune_deletes_only_expired_keys(db):
    ws = await builders.workspace(db)
    for key, at in (("old", NOW - timedelta(hours=25)), ("older", NOW - timedelta(days=3)), ("new", NOW)):
        await idempotency_keys.replay_or_reserve(db, ws, key, HASH, now=at)
    assert await idempotency_keys.prune(db, now=NOW) == 2
    assert [r["idempotency_key"] for r in await db.fetch("SELECT idempotency_key FROM idempotent_requests")] == [
        "new"]


async def test_a_key_s_life_is_told_by_postgresql_s_clock_whatever_the_node_s_says(db):
    """A node whose clock ran 25 h ahead deleted every workspace's keys and replayed nothing (issue 40, item 2):
    reserving and pruning read PostgreSQL's clock, which every node shares."""
    ws = await builders.workspace(db)
    database_now = await db.fetchval("SELECT now()")
    for key, age in (("day-old", timedelta(hours=25)), ("fresh", timedelta(hours=23)), ("new", timedelta(0))):
        await idempotency_keys.replay_or_reserve(db, ws, key, HASH, now=database_now - age)
    assert await idempotency_keys.prune(db) == 1
    kept = {r["idempotency_key"] for r in await db.fetch("SELECT idempotency_key FROM idempotent_requests")}
    assert kept == {"fresh", "new"}
    # Reserved without a time named: stamped by PostgreSQL, so a retry finds it in progress, not expired.
    held = await idempotency_keys.replay_or_reserve(db, ws, "unnamed", HASH)
    assert isinstance(held, Reservation) and abs(held.reserved_at - await db.fetchval("SELECT now()")) < \
        timedelta(seconds=5)
    assert await idempotency_keys.replay_or_reserve(db, ws, "unnamed", HASH) == InProgress()


async def test_concurrent_identical_requests_reserve_exactly_once(db):
    ws = await builders.workspace(db)
    async def reserve(key: str, outcomes: list) -> None:
        outcomes.append(await idempotency_keys.replay_or_reserve(db, ws, key, HASH, now=NOW))

    for round_number in range(5):
        outcomes: list = []
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(reserve, f"race-{round_number}", outcomes)
        assert sum(isinstance(o, Reservation) for o in outcomes) == 1, outcomes
        assert sum(o == InProgress() for o in outcomes) == 7


async def test_remember_refuses_a_status_that_is_not_http(db):
    ws = await builders.workspace(db)
    reservation = await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=NOW)
    with pytest.raises(ValueError):
        await idempotency_keys.remember(db, reservation, 0, {})


# -- send_once: the key's round, owned by the use case --------------------------------------------------------


def _deps(db) -> UseCaseDeps:
    return UseCaseDeps(db, None, WallClock(), None, None)  # type: ignore[arg-type] (the round needs the db alone)


def _verdict(status: int, body: dict) -> Done:
    return Done(SendVerdict(status, body))  # type: ignore[arg-type]


async def test_send_once_sends_once_and_replays(db):
    ws = await builders.workspace(db)
    sends = []

    async def send(reservation):
        # The sender stores its answer on the reservation (the conversation does it with the send's outcome).
        sends.append(reservation)
        answer = {"success": True, "messageId": f"wamid.{len(sends)}"}
        if reservation is not None:
            assert await key_queries.complete(db, workspace_id=ws, key=reservation.key,
                                              reserved_at=reservation.reserved_at, status=200,
                                              body_json=msgspec.json.encode(answer).decode())
        return _verdict(200, answer)

    first = await keyed_sends.send_once(_deps(db), ws, "k", HASH, send)
    second = await keyed_sends.send_once(_deps(db), ws, "k", HASH, send)
    conflict = await keyed_sends.send_once(_deps(db), ws, "k", idempotency.request_hash("POST", SEND, b"{}"), send)
    without_key = await keyed_sends.send_once(_deps(db), ws, None, None, send)
    assert len(sends) == 2  # the first request and the one without a key
    assert first == _verdict(200, {"success": True, "messageId": "wamid.1"})
    assert second == Done(keyed_sends.Replayed(200, {"success": True, "messageId": "wamid.1"}))
    assert isinstance(conflict, Refused) and (conflict.status, conflict.message) == (
        422, "This Idempotency-Key was used with a different request.")
    assert without_key == _verdict(200, {"success": True, "messageId": "wamid.2"})


async def test_a_concurrent_duplicate_is_refused_409_while_the_first_sends(db):
    ws = await builders.workspace(db)
    release_send = trio.Event()
    sends = []
    answers = {}

    async def slow_send(reservation):
        sends.append(1)
        await release_send.wait()
        return _verdict(200, {"success": True})

    async def request(name):
        answers[name] = await keyed_sends.send_once(_deps(db), ws, "k", HASH, slow_send)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(request, "first")
        while not sends:
            await trio.sleep(0.01)
        await request("second")
        release_send.set()
    assert len(sends) == 1
    assert answers["first"] == _verdict(200, {"success": True})
    second = answers["second"]
    assert isinstance(second, Refused) and (second.status, second.message, second.data) == (
        409, "A request with this Idempotency-Key is still in progress.", {"retry_after": 1})


async def test_a_send_that_fails_or_is_refused_releases_the_key(db):
    ws = await builders.workspace(db)

    async def failing_send(reservation):
        raise RuntimeError("bug")

    async def refused_send(reservation):
        return Refused(Reason.NOT_FOUND, "Contact not found", 404, "not_sent")

    async def working_send(reservation):
        return _verdict(200, {"success": True})

    with pytest.raises(RuntimeError):
        await keyed_sends.send_once(_deps(db), ws, "k", HASH, failing_send)
    assert await db.fetchval("SELECT count(*) FROM idempotent_requests") == 0
    refused = await keyed_sends.send_once(_deps(db), ws, "k", HASH, refused_send)
    assert isinstance(refused, Refused) and refused.code == "not_sent"
    assert await db.fetchval("SELECT count(*) FROM idempotent_requests") == 0
    retry = await keyed_sends.send_once(_deps(db), ws, "k", HASH, working_send)
    assert retry == _verdict(200, {"success": True})


async def test_a_cancelled_send_keeps_its_reservation_until_abandoned(db):
    ws = await builders.workspace(db)

    async def endless_send(reservation):
        await trio.sleep_forever()

    with trio.move_on_after(0.2):
        await keyed_sends.send_once(_deps(db), ws, "k", HASH, endless_send)
    reserved_at = await db.fetchval("SELECT created_at FROM idempotent_requests")  # PostgreSQL's clock
    just_before = reserved_at + idempotency_keys.ABANDONED_AFTER - timedelta(seconds=1)
    assert await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=just_before) == InProgress()
    later = reserved_at + idempotency_keys.ABANDONED_AFTER + timedelta(seconds=1)
    assert isinstance(await idempotency_keys.replay_or_reserve(db, ws, "k", HASH, now=later), Reservation)


# -- the header and the request's identity --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["a", "x" * 200, "order-42:retry 1", "~!@#$%^&*()"])
def test_valid_keys(value):
    assert idempotency.parse_key(value) == value


@pytest.mark.parametrize("value", ["", "x" * 201, "caf\u00e9", "tab\there", "line\nbreak", "\x7f"])
def test_invalid_keys_are_a_400_sentence(value):
    with pytest.raises(SentenceError) as raised:
        idempotency.parse_key(value)
    assert raised.value.status == 400
    assert raised.value.sentence == "Idempotency-Key must be 1 to 200 printable ASCII characters."


def test_no_header_means_no_key():
    assert idempotency.parse_key(None) is None


def test_request_identity_ignores_json_formatting_but_not_content():
    reordered = b'{ "type":"text",\n "text":"hi", "to":"919876543210" }'
    assert idempotency.request_hash("post", SEND, reordered) == HASH
    assert idempotency.request_hash("POST", SEND, BODY.replace(b"hi", b"hi!")) != HASH
    assert idempotency.request_hash("POST", "/api/bulk-send", BODY) != HASH
    assert idempotency.request_hash("PUT", SEND, BODY) != HASH
    assert idempotency.request_hash("POST", SEND, b"not json") != idempotency.request_hash("POST", SEND, b"not  json")
    assert len(HASH) == 32
