"""A chat's satisfaction surveys, as its conversation actor runs them (docs/team.md#satisfaction-surveys).

- Resolved: the actor tells itself `OfferSurvey`, so the resolve is answered at once. If the workspace has surveys
  on, the chat is on WhatsApp, its customer window is open and nobody took the chat back meanwhile, the survey's row
  is committed first (its id goes into each choice) and then its list message is sent as every send is (pending
  first, the pacer, exactly once, consent).
- The customer's choice arrives as an interactive reply naming the survey and a rating. It is stored as their
  message and the rating on the survey in one transaction, with the `csat_received` event; it opens no wait, wakes
  no bot and counts as nobody's unread: it answers the business's question. A later choice replaces the rating
  (while the survey is at most RATING_LIFETIME old). With thanks set, the actor then tells itself `InviteComment`.
- The invitation marks the survey as the chat's open one (`csat_survey_id`) and sends the thanks. The customer's
  next text within COMMENT_WINDOW is the comment, stored the same way (and `csat_received` again, with it); any
  other message, or one after the window, closes the survey and is a message like every other.

Every time rule reads PostgreSQL's clock (`db_now` of the survey's own row), never this node's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inbox_actors.conversations import events as data
from inbox_actors.conversations.chat_state import ChatState, OutboxEvent
from inbox_actors.conversations.conversation_protocol import InviteComment, OfferSurvey, Send
from inbox_actors.conversations.sending import WHATSAPP, Sender, window_open
from inbox_actors.domain import events, satisfaction
from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.text import storable
from inbox_actors.platform.payloads import INTERACTIVE, InboundMessage, SendRequest
from inbox_actors.runtime import Actor, MailboxFull
from inbox_actors.team import csat
from persistence.database import Record, UnitOfWork
from persistence.queries import conversations as conversation_queries
from persistence.queries import csat as queries

log = logging.getLogger("inbox_actors.conversations.conversation")

SENDER_LABEL = "Satisfaction survey"


@dataclass(frozen=True)
class SurveyAnswer:
    """A customer's message that answers a survey: the chat's changes and the event to commit with it, and whether
    to invite a comment once committed."""

    changes: dict[str, Any]
    event: OutboxEvent | None
    """None: the message only closed the survey (it is an ordinary message)."""
    invite: int | None


class SatisfactionSurveys:
    def __init__(self, chat: ChatState, sender: Sender, actor: Actor) -> None:
        self._chat = chat
        self._sender = sender
        self._actor = actor     # its own ref, to tell itself what comes after a resolve or a rating

    def resolved(self, before: Record, by_member: int | None, at: datetime) -> None:
        """The chat was just resolved from `before` (its row then): offer the survey after this turn."""
        self._tell(OfferSurvey(member_id=before["assigned_to"] or by_member, team_id=before["team_id"],
                               resolved_at=at))

    async def offer(self, order: OfferSurvey) -> None:
        chat = self._chat
        row = chat.row
        if row is None or chat.state is not State.AI_ONLY or row["channel"] != WHATSAPP \
                or not window_open(row["last_customer_message_at"], chat.clock.now()):
            return   # taken back meanwhile, a web-client chat, or a window a list message may not be sent in
        settings = await queries.settings(chat.db, chat.workspace_id)
        if settings is None or not settings["enabled"]:
            return
        async with chat.db.transaction() as tx:
            survey_id = await queries.start_survey(tx, chat.workspace_id, row["id"], order.member_id, order.team_id,
                                                   order.resolved_at)
        question = settings["question"]
        outcome = await self._sender.send(Send(
            request=SendRequest(to=chat.phone, type=INTERACTIVE, text=question,
                                interactive=csat.survey_message(question, survey_id)),
            sender_type="system", author="system", sender_label=SENDER_LABEL))
        message = outcome.message_row
        # In doubt counts as sent: the platform may have it, and a choice from it must be taken.
        went = outcome.accepted or outcome.in_doubt
        await queries.sent(chat.db, survey_id, message["id"] if message is not None else None,
                           "sent" if went else "not_sent")

    async def judge(self, tx: UnitOfWork, inbound: InboundMessage, row: Record) -> SurveyAnswer | None:
        """Whether `inbound` answers one of the chat's surveys (a choice, or the comment invited); if so the survey is
        updated in `tx`, the transaction that stores the message."""
        choice = satisfaction.chosen(inbound.reply_id) if inbound.type == INTERACTIVE else None
        if choice is not None:
            return await self._rated(tx, row, *choice)
        if row["csat_survey_id"] is None:
            return None
        # The customer spoke after a comment was invited: their comment, or else a new message that closes it.
        closes = {"csat_survey_id": None}
        survey = await queries.find_survey(tx, row["id"], row["csat_survey_id"])
        if survey is None or inbound.type != "text" or not inbound.text or survey["comment"] is not None \
                or survey["comment_invited_at"] is None \
                or survey["db_now"] - survey["comment_invited_at"] > satisfaction.COMMENT_WINDOW:
            return SurveyAnswer(closes, None, None) if survey is not None else None
        commented = await queries.comment(tx, survey["id"], storable(inbound.text), survey["db_now"])
        return SurveyAnswer(closes, await self._event(tx, commented), None)

    async def _rated(self, tx: UnitOfWork, row: Record, survey_id: int, rating: int) -> SurveyAnswer | None:
        survey = await queries.find_survey(tx, row["id"], survey_id)
        if survey is None or survey["db_now"] - survey["created_at"] > satisfaction.RATING_LIFETIME:
            return None   # another chat's survey, or one too old: an ordinary message
        rated = await queries.rate(tx, survey_id, rating, survey["db_now"])
        invite = survey_id if survey["comment_invited_at"] is None else None
        return SurveyAnswer({}, await self._event(tx, rated), invite)

    async def _event(self, tx: UnitOfWork, survey: Record) -> OutboxEvent:
        """`csat_received` of the survey as it now stands."""
        chat = self._chat
        names = await conversation_queries.member_names(tx, [survey["member_id"]] if survey["member_id"] else [])
        team = await queries.team_name(tx, survey["team_id"]) if survey["team_id"] is not None else None
        return OutboxEvent(events.CSAT_RECEIVED, "customer", data.csat_data(chat.phone, survey, names, team,
                                                                             survey["db_now"]))

    def answered(self, answer: SurveyAnswer) -> None:
        """After the answer is committed: a first rating is thanked, and a comment invited."""
        if answer.invite is not None:
            self._tell(InviteComment(answer.invite))

    async def invite_comment(self, order: InviteComment) -> None:
        chat = self._chat
        row = chat.row
        settings = await queries.settings(chat.db, chat.workspace_id)
        if row is None or settings is None or not settings["thanks"]:
            return
        async with chat.transaction() as tx:
            if not await queries.invite_comment(tx, order.survey_id):
                return     # invited before (the customer chose again)
            await chat.commit(tx, {"csat_survey_id": order.survey_id}, [], chat.clock.now())
        await self._sender.send(Send(request=SendRequest(to=chat.phone, text=settings["thanks"]),
                                     sender_type="system", author="system", sender_label=SENDER_LABEL))

    def _tell(self, message: object) -> None:
        try:
            self._actor.self_ref.tell_nowait(message)
        except MailboxFull:
            # A flooded chat: its survey (or the thanks) is skipped rather than queued without bound.
            log.warning("conversation %s: mailbox full, %s skipped", self._chat.key, type(message).__name__)
