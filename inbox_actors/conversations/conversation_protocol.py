"""What the conversation actor understands and answers (its protocol); `conversations.conversation`
re-exports all of it, so callers import from there."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import msgspec

from inbox_actors.platform.payloads import InboundMessage, SendRefused, SendRequest, StatusUpdate
from inbox_actors.team.mentions import Found

# -- messages ------------------------------------------------------------------------------------------------


class CustomerWrote(msgspec.Struct, frozen=True):
    message: InboundMessage


class StatusReported(msgspec.Struct, frozen=True):
    update: StatusUpdate


class Wake(msgspec.Struct, frozen=True):
    """Nothing but to be active: a chat woken when its workspace's node took it over asks its bot again if an
    earlier holder may have left its turn mid-way, as any activation does (turn_resumption.py)."""


class BotTurn(msgspec.Struct, frozen=True):
    """Let the bot answer the customer's latest message, if the chat is still the bot's to answer."""


class BotAnswered(msgspec.Struct, frozen=True):
    """The bot's answer to the chat as it stood at the customer's message `for_message`: taken only if the chat is
    still the bot's and the customer has not written since (`answer` is a conversations/bot.py BotAnswer)."""

    answer: object
    for_message: int


class Snooze(msgspec.Struct, frozen=True):
    """A member snoozes the chat until `until` (None: until the customer writes); answered `Changed`."""

    until: datetime | None
    by_member: int
    author: str
    restricted_to: int | None = None


class Unsnooze(msgspec.Struct, frozen=True):
    """A member ends the chat's snooze now; answered `Changed`."""

    by_member: int
    author: str
    restricted_to: int | None = None


class SnoozeDue(msgspec.Struct, frozen=True):
    """The snooze clock: the chat's snooze until `until` has come; it ends if the chat is still snoozed so."""

    until: datetime


# The snooze clock's actor kind: a chat tells it of a snooze that ends at a time (`DueAt`).
SNOOZE_CLOCK = "snooze_clock"
SNOOZE_CLOCK_KEY = "service"


class SlaDue(msgspec.Struct, frozen=True):
    """The SLA clock: this deadline of the chat has passed. Announced (sla_breached) once, if the customer still
    waits for a person under that same deadline."""

    deadline: datetime


class KeyReservation(msgspec.Struct, frozen=True):
    """The Idempotency-Key reservation a send holds (the key's `created_at`): its pending message is linked to
    it, and its answer stored on it, only while the reservation is still the send's."""

    key: str
    reserved_at: datetime


class BroadcastRecipient(msgspec.Struct, frozen=True):
    """The broadcast recipient a send is for: its message is committed only while the recipient is still queued
    (claimed in the same statement), and the broadcast has already taken the send's slot from the number's pacer."""

    broadcast_id: int
    position: int


class Send(msgspec.Struct, frozen=True):
    request: SendRequest
    sender_type: str                 # system (API sends), agent (a member replying), bot
    author: str                      # the webhook envelope's actor
    sender_label: str | None = None
    actor_id: int | None = None      # the member, for agent replies
    restricted_to: int | None = None
    reservation: KeyReservation | None = None
    broadcast: BroadcastRecipient | None = None
    # The AI agent's reply names the model call that wrote it: the call is linked to the message in the statement
    # that commits it, so the reply is never seen without its tokens, cost and grounding; and it is charged the
    # service's credits per reply (`ConversationDeps.ai_reply_credits`).
    model_call: int | None = None


class GiveUpInDoubt(msgspec.Struct, frozen=True):
    """The in-doubt sweeper: this pending message of the chat has waited past IN_DOUBT_LIFETIME for its outcome;
    record it as failed (never send it again).

    `send_again`: a broadcast's message a node committed and then stopped or died with, before the platform
    answered, and for which no status came while the broadcast watched it (broadcasts/broadcast.py): recorded as
    failed for that reason, and its recipient queued again in the same transaction, to be sent once more."""

    message_id: int
    send_again: bool = False


class EraseChat(msgspec.Struct, frozen=True):
    """Delete the chat and everything of it (the contact's deletion); answered `Erased`."""


class Claim(msgspec.Struct, frozen=True):
    member_id: int
    author: str
    restricted_to: int | None = None


class Release(msgspec.Struct, frozen=True):
    by_member: int
    author: str
    reason: str | None = None
    restricted_to: int | None = None


class Transfer(msgspec.Struct, frozen=True):
    to_member: int
    by_member: int
    author: str
    reason: str | None = None
    restricted_to: int | None = None


class Resolve(msgspec.Struct, frozen=True):
    by_member: int
    author: str
    reason: str | None = None
    restricted_to: int | None = None


class OfferSurvey(msgspec.Struct, frozen=True):
    """The chat was just resolved: send its customer the satisfaction survey, if the workspace asks for one. Told by
    the actor to itself, so the resolve is answered without waiting for the platform. `member_id` and `team_id`: what
    the rating is credited to (who held the chat, else who resolved it; its team)."""

    member_id: int | None
    team_id: int | None
    resolved_at: datetime


class InviteComment(msgspec.Struct, frozen=True):
    """The customer rated survey `survey_id`: thank them and invite a comment (the actor tells itself)."""

    survey_id: int


class AutoAssign(msgspec.Struct, frozen=True):
    """The assignment desk gives the chat to `member_id`, chosen for its team `team_id` (None: no team): done only
    while the chat still waits for a person, held by nobody, not snoozed, and routed to that team; answered
    `Changed`, or `Refused` 409 `not_waiting` when it no longer waits so."""

    member_id: int
    team_id: int | None


class RouteToTeam(msgspec.Struct, frozen=True):
    """Put the chat in a team's queue (`team_id`; None: the workspace's own). A chat a member holds is released
    to it; answered `Changed`."""

    team_id: int | None
    by_member: int
    author: str
    reason: str | None = None
    restricted_to: int | None = None


class Open(msgspec.Struct, frozen=True):
    """A member opened the chat (inbox or embedded panel): a view, and the unread messages count as read."""

    member_id: int
    author: str
    via: str = "panel"
    restricted_to: int | None = None


class AddNote(msgspec.Struct, frozen=True):
    """A member's internal note on the chat (never sent to the customer); answered `NoteAdded`. With an
    Idempotency-Key's `reservation`, the note is written once per key (its answer stored in the note's
    transaction), or refused if the key is no longer the request's. `mentions`: the members its text names
    (`team/mentions.py`), stored with it."""

    member_id: int
    author: str
    text: str
    restricted_to: int | None = None
    reservation: KeyReservation | None = None
    mentions: tuple[Found, ...] = ()


class Label(msgspec.Struct, frozen=True):
    """Put a label of the workspace's set on the chat (`add`), or take one off; answered `Changed`."""

    name: str
    add: bool
    by_member: int
    author: str
    restricted_to: int | None = None


class NoteAdded(msgspec.Struct, frozen=True):
    message_id: int


class MarkRead(msgspec.Struct, frozen=True):
    """Unread cleared without anyone looking (a key marking read is not a person)."""

    author: str
    restricted_to: int | None = None


# -- replies -------------------------------------------------------------------------------------------------


class Recorded(msgspec.Struct, frozen=True):
    id: int | None
    duplicate: bool = False


class Changed(msgspec.Struct, frozen=True):
    state: str
    version: int


class NotVisible(msgspec.Struct, frozen=True):
    """No such chat, or not one the caller may see (assigned-only): answered 404."""


class Refused(msgspec.Struct, frozen=True):
    """An expected refusal: `code` for stable-code routes, `message` the sentence."""

    status: int
    code: str
    message: str
    state: str | None = None


class SendOutcome(msgspec.Struct, frozen=True):
    """What became of a `Send`. Exactly one of: accepted (`failure` and `refused_status` None), failed at the
    platform or the window (`failure`: the spec's HTTP 500 body), refused before sending (`refused_*`), or in doubt
    (`in_doubt`: committed as pending, and its outcome could not be written, or its platform call was abandoned,
    because the node lost the workspace; it may have gone out, and it is left pending for the node that holds the
    workspace now: send_records.py)."""

    channel: str
    message_row: Mapping[str, Any] | None = None
    """The message as recorded (a Record, or the dict `messages.as_recorded` made of one)."""
    platform_message_id: str | None = None
    failure: SendRefused | None = None
    refused_status: int | None = None
    refused_sentence: str | None = None
    in_doubt: bool = False

    @property
    def accepted(self) -> bool:
        return self.failure is None and self.refused_status is None and not self.in_doubt


class Erased(msgspec.Struct, frozen=True):
    """The chat is gone: `messages` deleted with it (None: there was no chat)."""

    messages: int | None
