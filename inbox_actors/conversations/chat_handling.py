"""The team's actions on a chat, for the conversation actor: claim, release, transfer, resolve (through the
state machine), a member opening the chat, a key marking it read, a member's internal note, a label put on or
taken off, a snooze begun or ended. Each writes through the chat's
`ChatState`: the assignment event (and its team audit entry) or the view, then the row (version-checked) and the
webhook event, in one transaction committed before the actor replies. A member opening the chat or marking it read
has also read it themselves (`member_chat_reads`: the agent inbox counts unread messages per member) and seen the
notes that mention them there (`note_mentions`). A note, a
label, a snooze and unread cleared have no webhook event; each writes `chat_changed` instead, which only people's
screens hear, so another member's open chat shows it at once. A note with an Idempotency-Key stores its answer on
the key in its own transaction, and the members it mentions with it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from inbox_actors.conversations import events as data
from inbox_actors.conversations import idempotency_keys
from inbox_actors.conversations.chat_state import ChatState, OutboxEvent
from inbox_actors.conversations.conversation_protocol import (
    Changed,
    KeyReservation,
    NoteAdded,
    Refused,
)
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain import events, team_audit
from inbox_actors.domain.conversation_states import State
from inbox_actors.team.mentions import Found
from persistence.database import UnitOfWork
from persistence.queries import conversations as conversation_queries
from persistence.queries import database_clock, member_reads, note_mentions
from persistence.queries import labels as label_queries
from persistence.queries import messages as message_queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import teams as team_queries
from persistence.queries import workspaces as workspace_queries
from persistence.queries.assignment import AUTO_ASSIGNED

# Repeated opens by one member within this long count once (the spec's views list).
VIEW_DEDUP = timedelta(minutes=1)


class _KeyTakenOver(Exception):
    """The note's Idempotency-Key reservation is no longer its request's: the note must not be written."""


class ChatHandling:
    def __init__(self, chat: ChatState) -> None:
        self._chat = chat

    def _changed(self, change: str, author: str, now: datetime) -> OutboxEvent:
        """What other screens hear of a change that has no webhook event."""
        return OutboxEvent(events.CHAT_CHANGED, author, data.chat_changed_data(self._chat.phone, change, now))

    async def transfer(self, to_member: int, *, by: int, reason: str | None, author: str) -> Changed | Refused:
        chat = self._chat
        assignment = states.transfer(chat.state, chat.row["assigned_to"], to_member)
        member = await workspace_queries.find_member(chat.db, to_member)
        if member is None or member["workspace_id"] != chat.workspace_id or member["status"] != "active":
            return Refused(400, "invalid_member", f"No active member {to_member} in this workspace.")
        return await self.assign(assignment, by=by, reason=reason, author=author)

    async def assign(self, assignment: states.Assignment, *, by: int | None, reason: str | None, author: str,
                     routed: tuple[int | None, str | None] | None = None) -> Changed:
        """Apply a claim, release, transfer or resolve: the assignment event, the row, the webhook event. `by` None:
        the system (automatic assignment). `routed`: the chat also moves to this team's queue (its id, or None for
        the workspace's; and the team's name), recorded in the same transaction."""
        chat = self._chat
        if assignment.event is None:
            return Changed(chat.row["state"], chat.row["version"])
        now = chat.clock.now()
        row = chat.row
        previous = row["assigned_to"]
        changes: dict[str, Any] = {"state": assignment.state.value, "assigned_to": assignment.assignee}
        if routed is not None:
            changes["team_id"] = routed[0]
        if assignment.event in ("claimed", "transferred"):
            changes.update(claimed_by=assignment.assignee, claimed_at=now)
            if row["state"] == State.AI_ONLY.value:
                changes.update(handover_reason=states.CLAIMED_FROM_BOT, handover_at=now)
                if row["waiting_since"] is not None and row["waiting_for_person_since"] is None:
                    changes.update(await chat.waiting_for_person(chat.db, None))
        elif assignment.event == "released":
            changes.update(claimed_by=None)
        elif assignment.event == "resolved":
            changes.update(claimed_by=None, resolved_at=now, waiting_for_person_since=None, sla_deadline_at=None)
        involved = [member for member in (previous, assignment.assignee, by) if member is not None]
        names = await conversation_queries.member_names(chat.db, involved)
        kind = events.CONVERSATION_RESOLVED if assignment.event == "resolved" else events.CONVERSATION_ASSIGNED
        announced = OutboxEvent(kind, author, data.assignment_data(
            chat.phone, assignment.event, assignment.state.value, previous, assignment.assignee, by, reason, names,
            now))
        async with chat.transaction() as tx:
            await conversation_queries.insert_assignment_event(
                tx, conversation_id=row["id"], event=assignment.event, at=now, from_member=previous,
                to_member=assignment.assignee, by_member=by, reason=reason)
            await audit_queries.record(tx, workspace_id=chat.workspace_id, at=now, member_id=by, via=author,
                                       action=team_audit.CHAT_ACTIONS[assignment.event], subject=chat.phone,
                                       details={"from": previous, "to": assignment.assignee, "reason": reason})
            if routed is not None:
                await self._record_route(tx, routed, by=by, reason=reason, author=author, now=now)
            await chat.commit(tx, changes, [announced], now)
        return Changed(chat.row["state"], chat.row["version"])

    async def route_to_team(self, team_id: int | None, *, by: int, reason: str | None, author: str
                            ) -> Changed | Refused:
        """Put the chat in `team_id`'s queue (None: the workspace's own). A chat a member holds is released to it,
        so the team's members (or automatic assignment) take it from there; a chat the bot still answers keeps
        it, and its hand-over lands in that queue."""
        chat = self._chat
        name = None
        if team_id is not None:
            team = await team_queries.find_team(chat.db, chat.workspace_id, team_id)
            if team is None:
                return Refused(400, "invalid_team", f"No team {team_id} in this workspace.")
            name = team["name"]
        if chat.row["team_id"] == team_id:
            return Changed(chat.row["state"], chat.row["version"])
        if chat.state is State.HUMAN_ACTIVE:
            released = states.release(chat.state, chat.row["assigned_to"])
            return await self.assign(released, by=by, reason=reason or _routed_reason(name), author=author,
                                     routed=(team_id, name))
        now = chat.clock.now()
        async with chat.transaction() as tx:
            await self._record_route(tx, (team_id, name), by=by, reason=reason, author=author, now=now)
            await chat.commit(tx, {"team_id": team_id}, [self._changed("team", author, now)], now)
        return Changed(chat.row["state"], chat.row["version"])

    async def _record_route(self, tx: UnitOfWork, routed: tuple[int | None, str | None], *, by: int | None,
                            reason: str | None, author: str, now: datetime) -> None:
        await audit_queries.record(tx, workspace_id=self._chat.workspace_id, at=now, member_id=by, via=author,
                                   action=team_audit.CHAT_ROUTED, subject=self._chat.phone,
                                   details={"from_team": self._chat.row["team_id"], "to_team": routed[0],
                                            "team_name": routed[1], "reason": reason})

    async def auto_assign(self, member_id: int, team_id: int | None) -> Changed | Refused:
        """The assignment desk's gift: only while the chat still waits in that team's queue, held by nobody."""
        chat = self._chat
        row = chat.row
        if row is None or chat.state is not State.HANDOFF_PENDING or row["assigned_to"] is not None \
                or row["snoozed"] or row["team_id"] != team_id:
            return Refused(409, "not_waiting", "The chat no longer waits in that queue.")
        return await self.assign(states.claim(chat.state, None, member_id), by=None, reason=AUTO_ASSIGNED,
                                 author="system")

    async def open(self, member_id: int, *, via: str, author: str) -> Changed:
        chat = self._chat
        now = chat.clock.now()
        row = chat.row
        unread = row["unread_count"]
        async with chat.transaction() as tx:
            last = await conversation_queries.last_view_by(tx, row["id"], member_id)
            repeated = last is not None and now - last["opened_at"] < VIEW_DEDUP
            if repeated and unread:
                # Still one view (the spec's views count repeated opens within a minute once), but the
                # messages it cleared are counted on it and announced as seen.
                await conversation_queries.add_marked_read(tx, last["id"], unread)
            elif not repeated:
                await conversation_queries.insert_view(tx, conversation_id=row["id"], member_id=member_id,
                                                       via=via, at=now, marked_read=unread)
            await member_reads.mark_read(tx, row["id"], member_id, now)
            await note_mentions.mark_seen(tx, chat.workspace_id, member_id, row["id"], now)
            seen: list[OutboxEvent] = []
            if not repeated or unread:
                names = await conversation_queries.member_names(tx, [member_id])
                seen.append(OutboxEvent(events.CONVERSATION_SEEN, author,
                                         data.seen_data(chat.phone, member_id, names, unread, now)))
            await chat.commit(tx, {"unread_count": 0, "unread_since": None} if unread else {}, seen, now)
        return Changed(chat.row["state"], chat.row["version"])

    async def add_note(self, member_id: int, text: str, *, author: str, reservation: KeyReservation | None = None,
                       mentions: tuple[Found, ...] = ()) -> NoteAdded | Refused:
        """A note in the thread, in the team's audit log; the chat's state, counts and waits are untouched. With
        a `reservation`, the note's answer is stored on its key in the same transaction, and only while the key
        is still the request's: a retry of the same key then gets this note, never a second one. The members it
        `mentions` are stored with it, and its `chat_changed` names them (all but the writer), whose screens tell
        them."""
        chat = self._chat
        now = chat.clock.now()
        told = [found.member_id for found in mentions if found.member_id != member_id]
        try:
            async with chat.transaction() as tx:
                note = await message_queries.insert_message(
                    tx, workspace_id=chat.workspace_id, conversation_id=chat.row["id"], direction="note",
                    sender_type="agent", actor_id=member_id, type="note", text=text, status="internal",
                    source="inbox", sent_at=now, status_at=now)
                await audit_queries.record(tx, workspace_id=chat.workspace_id, at=now, member_id=member_id,
                                           via=author, action=team_audit.NOTE_ADDED, subject=chat.phone,
                                           details={"note": note["id"]})
                if reservation is not None and not await idempotency_keys.answer(
                        tx, chat.workspace_id, reservation, 200, {"note": note["id"]}):
                    raise _KeyTakenOver
                await note_mentions.add(tx, workspace_id=chat.workspace_id, conversation_id=chat.row["id"],
                                        message_id=note["id"], writer=member_id, at=now, mentions=[
                                            (found.member_id, [n for span in found.spans for n in span])
                                            for found in mentions])
                changed = self._changed("note", author, now)
                if told:
                    names = await conversation_queries.member_names(tx, [member_id])
                    changed = OutboxEvent(changed.name, author, data.note_mentions_data(
                        changed.data, note["id"], member_id, names, told))
                await chat.commit(tx, {}, [changed], now)
        except _KeyTakenOver:
            return Refused(409, idempotency_keys.IN_PROGRESS_CODE, idempotency_keys.STILL_IN_PROGRESS)
        return NoteAdded(note["id"])

    async def label(self, name: str, add: bool, *, by: int, author: str) -> Changed | Refused:
        """Put on a label of the workspace's set (by its name, whatever its case) or take one off. The chat's
        labels are read under the row's lock, so a rename of the label set lands before or after, never lost."""
        chat = self._chat
        now = chat.clock.now()
        async with chat.transaction() as tx:
            current = await label_queries.chat_labels(tx, chat.row["id"])
            if add:
                found = await label_queries.find_label_named(tx, chat.workspace_id, name)
                if found is None:
                    return Refused(404, "label_not_found", f"No label named {name!r} in this workspace; create it "
                                                           "first.")
                labels = current if found["name"] in current else [*current, found["name"]]
            else:
                labels = [label for label in current if label.lower() != name.lower()]
            if labels != current:
                await audit_queries.record(tx, workspace_id=chat.workspace_id, at=now, member_id=by, via=author,
                                           action=team_audit.LABELED if add else team_audit.UNLABELED,
                                           subject=chat.phone, details={"label": name, "labels": labels})
                await chat.commit(tx, {"labels": labels}, [self._changed("labels", author, now)], now)
        return Changed(chat.row["state"], chat.row["version"])

    async def snooze(self, until: datetime | None, *, by: int, author: str) -> Changed | Refused:
        """Snooze until `until` (None: until the customer writes): the chat leaves the open views meanwhile."""
        chat = self._chat
        now = chat.clock.now()
        # In the future by PostgreSQL's clock, which the snooze clock ends it by (never this node's own).
        if until is not None and until <= await database_clock.now(chat.db):
            return Refused(400, "invalid_until", "until must be in the future.")
        async with chat.transaction() as tx:
            await audit_queries.record(tx, workspace_id=chat.workspace_id, at=now, member_id=by, via=author,
                                       action=team_audit.SNOOZED, subject=chat.phone,
                                       details={"until": until.isoformat() if until else None})
            await chat.commit(tx, {"snoozed": True, "snoozed_until": until}, [self._changed("snooze", author, now)],
                              now)
        return Changed(chat.row["state"], chat.row["version"])

    async def unsnooze(self, *, by: int | None, author: str) -> Changed:
        """End the snooze now (a member, the snooze clock when its time came); a chat not snoozed: nothing."""
        chat = self._chat
        if not chat.row["snoozed"]:
            return Changed(chat.row["state"], chat.row["version"])
        now = chat.clock.now()
        async with chat.transaction() as tx:
            await audit_queries.record(tx, workspace_id=chat.workspace_id, at=now, member_id=by, via=author,
                                       action=team_audit.UNSNOOZED, subject=chat.phone, details={})
            await chat.commit(tx, {"snoozed": False, "snoozed_until": None}, [self._changed("snooze", author, now)],
                              now)
        return Changed(chat.row["state"], chat.row["version"])

    async def mark_read(self, *, author: str) -> Changed:
        """Unread cleared; a member marking it read (a session's author) has also read it themselves, as an open
        would (`member_chat_reads`), while a key marking it read is nobody's reading."""
        chat = self._chat
        member_id = team_audit.member_id_of(author)
        if not chat.row["unread_count"] and member_id is None:
            return Changed(chat.row["state"], chat.row["version"])
        now = chat.clock.now()
        async with chat.transaction() as tx:
            if member_id is not None:
                await member_reads.mark_read(tx, chat.row["id"], member_id, now)
                await note_mentions.mark_seen(tx, chat.workspace_id, member_id, chat.row["id"], now)
            changes = {"unread_count": 0, "unread_since": None} if chat.row["unread_count"] else {}
            await chat.commit(tx, changes, [self._changed("read", author, now)], now)
        return Changed(chat.row["state"], chat.row["version"])


def _routed_reason(team_name: str | None) -> str:
    return f"to team {team_name}" if team_name is not None else "to the workspace's queue"
