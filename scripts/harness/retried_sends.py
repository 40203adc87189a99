"""Template sends that their clients retry until they get a verdict, and what the platform's record, the database and
the clients' answers then say of them: the crash checks' shared half (scripts/crash_sends.py kills and restarts one
service, scripts/cluster_check.py kills one of three nodes)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

import httpx
import trio

from harness.simulator import platform_record
from harness.workspace import Workspace
from persistence.database import Database

TEMPLATE = "crash_note"
PHONE_BASE = 447_200_000_000
STARTUP_SECONDS = 120.0
RETRY_PAUSE = 0.2                       # after an error or a dropped connection
REQUEST_TIMEOUT = 40.0                  # beyond the conversation's 30 s ask deadline


class Serving(Protocol):
    """What a client needs to know of the service it sends through: whether it is up, and since when."""

    up: trio.Event
    started_at: float


class Poster(Protocol):
    async def post(self, path: str, **request) -> httpx.Response: ...


@dataclass
class Send:
    """One logical send and what its client saw."""

    n: int
    label: str
    key: str | None
    answers: Counter = field(default_factory=Counter)
    message_ids: list[str] = field(default_factory=list)     # of every 200
    final: str = "none"                 # acknowledged, failed, in doubt, none


async def client(http: Poster, connections: trio.CapacityLimiter, service: Serving, send: Send,
                 phone: str, key: str, doubt_timeout: float, deadline: float) -> None:
    body = {"to": phone, "type": "template", "template": {"name": TEMPLATE, "language": "en",
                                                          "parameters": [send.label]}}
    headers = {"Authorization": f"Bearer {key}", **({"Idempotency-Key": send.key} if send.key else {})}
    while trio.current_time() < deadline:
        try:
            # Waiting for a connection here, not in httpx's pool: its queue slows down with a thousand waiters
            # (the first answer came after 15 s, against 0.5 s this way).
            async with connections:
                answer = await http.post("/api/send-message", json=body, headers=headers)
        except httpx.HTTPError as err:
            send.answers[type(err).__name__] += 1
            await trio.sleep(RETRY_PAUSE)
            continue
        payload = answer.json() if answer.headers.get("content-type", "").startswith("application/json") else {}
        if answer.status_code == 200:
            send.answers["200"] += 1
            send.message_ids.append(payload["messageId"])
            send.final = "acknowledged"
            return
        if answer.status_code == 500 and "errorCode" in payload:
            send.answers[f"500 errorCode {payload['errorCode']}"] += 1
            send.final = "failed"
            return
        if answer.status_code == 409:
            doubt = "outcome is not known" in payload.get("error", "")
            send.answers["409 in doubt" if doubt else "409 in progress"] += 1
            if doubt and not send.key:
                # It may have gone out: without a key a retry is a new send, which a careful client does not make.
                send.final = "in doubt"
                return
            if doubt and service.up.is_set() and trio.current_time() - service.started_at > doubt_timeout:
                send.final = "in doubt"
                return
            await trio.sleep(min(float(answer.headers.get("Retry-After", "1")), 2.0))
            continue
        send.answers[str(answer.status_code)] += 1
        await trio.sleep(RETRY_PAUSE)


async def outbound_rows(db: Database, workspace_id: int) -> list:
    return await db.fetch(
        "SELECT id, status, platform_message_id, idempotency_key, template_parameters[1] AS label FROM messages"
        " WHERE workspace_id = $1 AND direction = 'outbound'", workspace_id)


async def wait_settled(db: Database, ws: Workspace, simulator_url: str, timeout: float) -> float | None:
    """Seconds until every send the platform accepted has its message in the database; None after `timeout`."""
    started = trio.current_time()
    while trio.current_time() - started < timeout:
        accepted = {record["message_id"] for record in await platform_record(simulator_url, ws.phone_number_id)}
        known = {row["platform_message_id"] for row in await outbound_rows(db, ws.workspace_id)}
        if accepted <= known:
            return trio.current_time() - started
        await trio.sleep(0.5)
    return None


def report(chats: int, sends: list[Send], kill_times: list[float], seconds: float, settled: float | None,
           record: list[dict], rows: list, signal_name: str = "SIGKILL") -> int:
    """Prints what the clients, the platform's record and the database say; 1 when anything acknowledged was lost,
    a key was sent twice or answered two messageIds, or the platform has a send the database lacks; else 0."""
    by_label = {send.label: send for send in sends}
    delivered = Counter(record_["template_parameters"][0] for record_ in record
                        if record_["template_parameters"] and record_["template_parameters"][0] in by_label)
    accepted_ids = {record_["message_id"] for record_ in record}
    callbacks = {record_["callback_data"] for record_ in record}
    settled_ids = {row["platform_message_id"] for row in rows if row["status"] != "pending"}
    known_ids = {row["platform_message_id"] for row in rows}
    answers = sum((send.answers for send in sends), Counter())
    finals = Counter(send.final for send in sends)
    acknowledged = [message_id for send in sends for message_id in send.message_ids]
    lost = [message_id for message_id in acknowledged
            if message_id not in accepted_ids or message_id not in settled_ids]
    keyed_twice = [label for label, count in delivered.items() if count > 1 and by_label[label].key]
    unkeyed_twice = [label for label, count in delivered.items() if count > 1 and not by_label[label].key]
    two_answers = [send.label for send in sends if send.key and len(set(send.message_ids)) > 1]
    in_doubt = [row for row in rows if row["status"] == "pending"]
    reached = [row for row in in_doubt if str(row["id"]) in callbacks]
    unknown = accepted_ids - known_ids
    # The platform accepted them but no client heard so: the crash came between the platform's answer and the
    # client's; the database has them from their statuses (or from the commit the answer never left).
    unanswered = accepted_ids - set(acknowledged)
    doubted = [send for send in sends if send.key and send.answers["409 in doubt"] and send.final == "acknowledged"]
    print(f"sends: {len(sends):,} ({sum(1 for s in sends if s.key):,} with an Idempotency-Key) to {chats:,} "
          f"chats in {seconds:.1f} s; {len(kill_times)} {signal_name}s, "
          f"{', '.join(f'{t:.2f} s' for t in kill_times) or 'none'} after a start")
    print(f"client requests: {sum(answers.values()):,}; " + ", ".join(
        f"{name} x{count:,}" for name, count in answers.most_common()))
    print("final answers: " + ", ".join(f"{name} {finals[name]:,}"
                                        for name in ("acknowledged", "failed", "in doubt", "none")))
    print(f"platform: {len(record):,} sends accepted; database: {len(rows):,} outbound rows; "
          + (f"every accepted send known to the database {settled:.1f} s after the clients finished"
             if settled is not None else "NOT every accepted send known to the database at the end of the wait"))
    print(f"platform sends no client was told of: {len(unanswered)} (the database has {len(unanswered - unknown)}); "
          f"keyed sends answered 409 in doubt, then 200: {len(doubted)}")
    print(f"acknowledged sends lost: {len(lost)}")
    print(f"sends delivered twice to the platform for one key: {len(keyed_twice)}")
    print(f"keyed sends answered two different messageIds: {len(two_answers)}")
    twice_after = sum((by_label[label].answers for label in unkeyed_twice), Counter())
    print(f"unkeyed sends delivered more than once (the client retried without a key): {len(unkeyed_twice)}"
          + (f" (their clients were answered {', '.join(f'{name} x{count}' for name, count in twice_after.items())})"
             if unkeyed_twice else ""))
    print(f"rows left in doubt: {len(in_doubt)} ({len(in_doubt) - len(reached)} never reached the platform, "
          f"{len(reached)} reached it and are not settled)")
    print(f"platform sends the database does not know: {len(unknown)}")
    for what, examples in (("lost", lost), ("sent twice for one key", keyed_twice), ("unknown", sorted(unknown))):
        if examples:
            print(f"  first {what}: {', '.join(examples[:5])}")
    return 1 if lost or keyed_twice or two_answers or unknown else 0
