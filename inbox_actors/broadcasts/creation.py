"""Creating a broadcast (`POST /api/bulk-send`): the request, its rules, and the one transaction that stores the
broadcast with its whole audience.

Rules, each a named 400 and nothing stored:
- the template must be one of the workspace's, APPROVED, in that language (template_not_found,
  template_not_approved); every recipient's parameters (their own, or the broadcast's) must be as many as the
  template takes (parameter_count_mismatch);
- the audience is the listed phones (each a phone the API accepts: invalid_recipient names the first that is not)
  followed by the contacts matching `filter` (every tag given, the status when given), each number once
  (later repeats are dropped and counted as duplicates); at least one, at most MAX_RECIPIENTS
  (empty_audience, too_many_recipients). It is resolved now: contacts added later are not in it;
- `scheduled_at` must carry a time zone and lie at most MAX_SCHEDULE_AHEAD ahead; a time already past (up to
  SCHEDULE_SLACK, for clocks that disagree) sends at once (invalid_schedule otherwise).
Contacts that have opted out are skipped at once and counted. A creator without `campaign_approve` makes a
broadcast pending approval; otherwise it is scheduled or sending. An Idempotency-Key names one broadcast for as
long as the broadcast is kept: the same request again gets that broadcast, another request 422.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.phones import InvalidPhone, normalise_phone
from inbox_actors.platform.payloads import MAX_PARAMETERS
from persistence.database import Database, Record
from persistence.queries import broadcasts as queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import templates as template_queries

MAX_RECIPIENTS = 100_000
MAX_SCHEDULE_AHEAD = timedelta(days=90)
SCHEDULE_SLACK = timedelta(minutes=5)
APPROVED = "APPROVED"

PENDING_APPROVAL = "pending_approval"
SCHEDULED = "scheduled"
SENDING = "sending"

Text = Annotated[str, msgspec.Meta(max_length=1024)]
Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class TemplateOrder(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
    language: Annotated[str, msgspec.Meta(min_length=2, max_length=15)]
    parameters: Annotated[list[Text], msgspec.Meta(max_length=MAX_PARAMETERS)] = []


class RecipientOrder(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Annotated[str, msgspec.Meta(max_length=64)]
    # This recipient's template parameters, instead of the broadcast's.
    parameters: Annotated[list[Text], msgspec.Meta(max_length=MAX_PARAMETERS)] | None = None


class AudienceFilter(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Contacts having every one of `tags`, and `status` when given; `{}` is every contact."""

    tags: Annotated[list[Tag], msgspec.Meta(max_length=20)] = []
    status: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None


class BulkSend(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    template: TemplateOrder
    # Phones, or {"phone", "parameters"} for a recipient with parameters of their own.
    recipients: Annotated[list[Annotated[str, msgspec.Meta(max_length=64)] | RecipientOrder],
                          msgspec.Meta(max_length=MAX_RECIPIENTS)] = []
    filter: AudienceFilter | None = None
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    scheduled_at: datetime | None = None


class Refusal(Exception):
    """The request cannot make a broadcast: `status`, a stable `code` and a sentence."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Creator(msgspec.Struct, frozen=True):
    """Who asks for the broadcast, and whether they may send without approval."""

    workspace_id: int
    member_id: int
    via: str                       # api_key:<id> or member:<id>
    may_approve: bool


class Created(msgspec.Struct, frozen=True):
    row: Record
    replayed: bool                 # an earlier request with the same Idempotency-Key made it


async def create_broadcast(db: Database, creator: Creator, body: BulkSend, now: datetime, *,
                           idempotency_key: str | None = None, request_hash: bytes | None = None) -> Created:
    """Judge the request and store the broadcast with its audience; raises `Refusal`."""
    if idempotency_key is not None:
        earlier = await queries.find_by_key(db, creator.workspace_id, idempotency_key)
        if earlier is not None:
            return _replay(earlier, request_hash)
    template = await template_queries.find_template(db, creator.workspace_id, body.template.name,
                                                    body.template.language)
    if template is None:
        raise Refusal(400, "template_not_found", f"The workspace has no template {body.template.name!r} in "
                      f"language {body.template.language!r}.")
    if template["status"] != APPROVED:
        raise Refusal(400, "template_not_approved", f"Template {body.template.name!r} ({body.template.language}) "
                      f"is {template['status']}; only an APPROVED template can be broadcast.")
    scheduled_at = _schedule(body.scheduled_at, now)
    phones, parameters, duplicates = await _audience(db, creator.workspace_id, body, template["parameter_count"])
    status = PENDING_APPROVAL if not creator.may_approve else SCHEDULED if scheduled_at is not None else SENDING
    name = body.name or f"{body.template.name} {now:%Y-%m-%d %H:%M} UTC"
    async with db.transaction() as tx:
        row = await queries.insert_broadcast(
            tx, workspace_id=creator.workspace_id, name=name, template_name=template["name"],
            template_language=template["language"], template_category=template["category"],
            parameters=list(body.template.parameters),
            audience={"phones": len(body.recipients),
                      "filter": msgspec.to_builtins(body.filter) if body.filter is not None else None},
            status=status, approval_required=not creator.may_approve, scheduled_at=scheduled_at,
            created_by=creator.member_id, created_via=creator.via,
            recipient_count=len(phones), duplicate_count=duplicates, idempotency_key=idempotency_key,
            request_hash=request_hash, created_at=now, started_at=now if status == SENDING else None)
        if row is None:
            # Another request with the same key committed first.
            raise _KeyTaken()
        await queries.insert_recipients(tx, row["id"], creator.workspace_id, phones, parameters)
        await audit_queries.record(tx, workspace_id=creator.workspace_id, at=now, member_id=creator.member_id,
                                   via=creator.via, action=team_audit.BROADCAST_CREATED,
                                   subject=team_audit.broadcast_subject(row["id"]),
                                   details={"name": name, "recipients": len(phones), "status": status})
    return Created(row, replayed=False)


async def create_once(db: Database, creator: Creator, body: BulkSend, now: datetime, *,
                      idempotency_key: str | None = None, request_hash: bytes | None = None) -> Created:
    """`create_broadcast`, and when a concurrent request with the same Idempotency-Key won, its broadcast."""
    try:
        return await create_broadcast(db, creator, body, now, idempotency_key=idempotency_key,
                                      request_hash=request_hash)
    except _KeyTaken:
        earlier = await queries.find_by_key(db, creator.workspace_id, idempotency_key or "")
        assert earlier is not None
        return _replay(earlier, request_hash)


class _KeyTaken(Exception):
    pass


def _replay(earlier: Record, request_hash: bytes | None) -> Created:
    if bytes(earlier["request_hash"] or b"") != (request_hash or b""):
        raise Refusal(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request.")
    return Created(earlier, replayed=True)


def _schedule(at: datetime | None, now: datetime) -> datetime | None:
    if at is None:
        return None
    if at.tzinfo is None:
        raise Refusal(400, "invalid_schedule", "scheduled_at must be an ISO 8601 date-time with a time zone "
                      "(e.g. 2026-11-24T09:00:00Z).")
    if at > now + MAX_SCHEDULE_AHEAD:
        raise Refusal(400, "invalid_schedule", f"scheduled_at may be at most {MAX_SCHEDULE_AHEAD.days} days ahead.")
    if at < now - SCHEDULE_SLACK:
        raise Refusal(400, "invalid_schedule", "scheduled_at is in the past; leave it out to send now.")
    return at if at > now else None


async def _audience(db: Database, workspace_id: int, body: BulkSend, parameter_count: int
                    ) -> tuple[list[str], list[str | None], int]:
    """(phones in order, each one's own parameters as a JSON array or None, duplicates dropped)."""
    phones: list[str] = []
    parameters: list[str | None] = []
    seen: set[str] = set()
    duplicates = 0

    def check_count(given: list[str], who: str) -> None:
        if len(given) != parameter_count:
            raise Refusal(400, "parameter_count_mismatch", f"Template {body.template.name!r} takes "
                          f"{parameter_count} parameter(s); {who} gives {len(given)}.")

    if any(not isinstance(r, RecipientOrder) or r.parameters is None for r in body.recipients) or body.filter:
        check_count(body.template.parameters, "the broadcast")
    for number, recipient in enumerate(body.recipients, 1):
        raw = recipient.phone if isinstance(recipient, RecipientOrder) else recipient
        try:
            phone = normalise_phone(raw)
        except InvalidPhone as err:
            raise Refusal(400, "invalid_recipient", f"Recipient {number} ({raw!r}) is not a phone number: {err}."
                          ) from None
        own = recipient.parameters if isinstance(recipient, RecipientOrder) else None
        if own is not None:
            check_count(own, f"recipient {number} ({phone})")
        if phone in seen:
            duplicates += 1
            continue
        seen.add(phone)
        phones.append(phone)
        parameters.append(msgspec.json.encode(own).decode() if own is not None else None)
    if body.filter is not None:
        matched = await queries.audience_phones(db, workspace_id, tags=body.filter.tags, status=body.filter.status,
                                                limit=MAX_RECIPIENTS + 1)
        for phone in matched:
            if phone in seen:
                duplicates += 1
                continue
            seen.add(phone)
            phones.append(phone)
            parameters.append(None)
    if not phones:
        raise Refusal(400, "empty_audience", "The broadcast has no recipients: give phones in recipients, or a "
                      "filter that matches contacts.")
    if len(phones) > MAX_RECIPIENTS:
        raise Refusal(400, "too_many_recipients", f"A broadcast reaches at most {MAX_RECIPIENTS:,} recipients; "
                      "split the audience.")
    return phones, parameters, duplicates
