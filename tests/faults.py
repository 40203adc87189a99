"""Statements the tests make fail, picked by their SQL for `Database.fail_next` (persistence/database.py): a fault
is planned on the database the code under test uses, not by patching a query function by name.

A predicate here that no longer matches (its statement was rewritten) makes the fault silently miss: a test
that does not otherwise see the fault happen asserts the plan's `raised`.
"""

from __future__ import annotations


def records_a_send_outcome(sql: str) -> bool:
    """A send's outcome written on its row: sent with the platform's id (in the chat's commit statement), or failed
    (messages.outcome_update)."""
    return "UPDATE messages SET status = $" in sql and ", conversation_id = coalesce(" in sql


def reads_a_contact(sql: str) -> bool:
    """A contact's row read by workspace and phone (contacts.find_contact)."""
    return sql == "SELECT * FROM contacts WHERE workspace_id = $1 AND phone = $2"
