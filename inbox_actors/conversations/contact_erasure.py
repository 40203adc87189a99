"""Deleting contacts: the customer's chat and everything of it, then the contact, each by its single writer.

The chat's conversation actor erases the chat (messages, receipts, views, assignment history, SLA breaches; see
persistence/queries/erasure.py), so nothing the actor holds or is doing survives it; then the contact's card
deletes the contact. A customer who writes in between makes a new chat, and the contact stays (409: delete it
again). Each deletion is recorded in the team audit log with who deleted and the number masked. Events already
queued for webhooks are delivered (or pruned) as they are: they left the service's hands when they were committed.
(This lives with the conversations, which already depend on contacts; the other way round would be a cycle.)
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.contacts import contact_card
from inbox_actors.conversations import conversation
from inbox_actors.domain import team_audit
from inbox_actors.runtime import Directory
from persistence.database import Database
from persistence.queries import team_audit as audit_queries

MAX_BULK = 500


class ContactDeleted(msgspec.Struct, frozen=True):
    phone: str
    deleted: bool
    messages_deleted: int
    error: str | None = None              # why not (the sentence of the single delete)
    status: int = 200                     # the single delete's status for this phone


async def delete_contact(actors: Directory, db: Database, workspace_id: int, phone: str, *, member_id: int,
                         via: str, now: datetime) -> ContactDeleted:
    """Erase the chat, then the contact (`phone` normalised)."""
    chat = await conversation.ask_conversation(actors, workspace_id, phone, conversation.EraseChat())
    messages = chat.messages if isinstance(chat, conversation.Erased) and chat.messages is not None else 0
    card = await actors.ref(contact_card.KIND, contact_card.card_key(workspace_id, phone)).ask(
        contact_card.EraseContact())
    if isinstance(card, contact_card.ContactRefusal):
        if card.status == 404 and messages:
            card = None  # a number the workspace sent to without a contact: its messages were all there was
        else:
            return ContactDeleted(phone, False, messages, card.sentence, card.status)
    await audit_queries.record(db, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                               action=team_audit.CONTACT_DELETED, subject=team_audit.masked_phone(phone),
                               details={"messages_deleted": messages})
    return ContactDeleted(phone, True, messages)
