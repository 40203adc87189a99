"""The contact card actor on real PostgreSQL: writes commit before the reply, events ride in the same
transaction, the version fences writers (its own queue and other processes'), and refusals change nothing."""

import msgspec
import pytest

from inbox_actors.contacts.contact_card import (
    ContactRefusal,
    ContactSaved,
    CreateContact,
    EditContact,
    change_contact,
    contact_card_kind,
)
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from persistence.queries import contacts as contact_queries
from tests import builders

PHONE = "919876543210"


@pytest.fixture
async def card(db, nursery):
    actors = ActorSystem([contact_card_kind(db, WallClock())])
    await nursery.start(actors.run)
    workspace_id = await builders.workspace(db)

    class Card:
        async def send(self, message, phone: str = PHONE):
            return await change_contact(actors, workspace_id, phone, message)

        async def row(self, phone: str = PHONE):
            return await contact_queries.find_contact(db, workspace_id, phone)

        async def events(self):
            rows = await db.fetch("SELECT event, actor, data FROM webhook_outbox WHERE workspace_id = $1 ORDER BY id",
                                  workspace_id)
            return [(r["event"], r["actor"], msgspec.json.decode(r["data"])) for r in rows]

    card = Card()
    card.workspace_id, card.db, card.actors = workspace_id, db, actors
    yield card
    await actors.shutdown(1)


async def test_create_commits_the_contact_and_its_events_before_replying(card):
    reply = await card.send(CreateContact(name="Asha", email="asha@example.com", tags=("vip", "lead"),
                                          attributes={"plan": "gold"}, actor="crm sync"))
    assert isinstance(reply, ContactSaved) and reply.created
    assert reply.contact.version == 1 and reply.contact.status == "New"
    row = await card.row()
    assert (row["name"], row["email"], list(row["tags"])) == ("Asha", "asha@example.com", ["vip", "lead"])
    assert contact_queries.contact_attributes(row) == {"plan": "gold"}
    events = await card.events()
    assert [(e, a) for e, a, _ in events] == [("contact_created", "crm sync"), ("tag_added", "crm sync"),
                                              ("tag_added", "crm sync")]
    created = events[0][2]
    assert created["phone"] == PHONE and created["tags"] == ["vip", "lead"]
    assert created["custom_attributes"] == {"plan": "gold"} and created["at"].endswith("Z")
    assert [data["tag"] for _, _, data in events[1:]] == ["vip", "lead"]


async def test_create_on_an_existing_phone_updates_the_given_fields_only(card):
    await card.send(CreateContact(name="Asha", email="asha@example.com", company="Acme", tags=("vip",),
                                  attributes={"plan": "gold", "seats": 2}))
    reply = await card.send(CreateContact(name="Asha Rao", company=None, tags=("VIP", "paid"),
                                          attributes={"seats": None, "region": "south"}))
    assert isinstance(reply, ContactSaved) and not reply.created
    view = reply.contact
    assert (view.name, view.email, view.company, view.version) == ("Asha Rao", "asha@example.com", None, 2)
    assert view.tags == ["vip", "paid"]
    assert view.custom_attributes == {"plan": "gold", "region": "south"}
    assert [(e, d.get("tag")) for e, _, d in await card.events()] == [
        ("contact_created", None), ("tag_added", "vip"), ("tag_added", "paid")]


async def test_create_adopts_a_contact_another_writer_inserted(card):
    # The conversation actor creates contacts when a customer writes first; a create then updates that row.
    async with card.db.transaction() as tx:
        _, created = await contact_queries.insert_contact_if_absent(tx, card.workspace_id, PHONE, "wa profile")
    assert created
    reply = await card.send(CreateContact(name="Asha", status="Qualified"))
    assert not reply.created and reply.contact.name == "Asha" and reply.contact.status == "Qualified"
    assert reply.contact.version == 2


async def test_edit_of_an_unknown_contact_is_refused_and_creates_nothing(card):
    reply = await card.send(EditContact(name="Ghost"))
    assert reply == ContactRefusal(404, "Contact not found")
    assert await card.row() is None


async def test_a_stale_version_is_refused_and_changes_nothing(card):
    await card.send(CreateContact(name="Asha"))
    await card.send(EditContact(name="Asha Rao", expected_version=1))
    reply = await card.send(EditContact(name="Someone else", add_tags=("x",), expected_version=1))
    assert isinstance(reply, ContactRefusal)
    assert (reply.status, reply.code, reply.current_version) == (412, "version_conflict", 2)
    row = await card.row()
    assert (row["name"], row["version"], list(row["tags"])) == ("Asha Rao", 2, [])
    assert [e for e, _, _ in await card.events()] == ["contact_created"]


async def test_a_write_from_another_process_between_read_and_write_fences_the_card(card, monkeypatch):
    await card.send(CreateContact(name="Asha"))
    real_update = contact_queries.update_contact

    async def another_process_wins_first(tx, **values):
        # Another process (its own connection and transaction) commits an edit after the card read the row.
        async with card.db.transaction() as other:
            await other.execute("UPDATE contacts SET name = 'Other process', version = version + 1"
                                " WHERE workspace_id = $1 AND phone = $2", card.workspace_id, PHONE)
        return await real_update(tx, **values)

    monkeypatch.setattr(contact_queries, "update_contact", another_process_wins_first)
    reply = await card.send(EditContact(name="Lost update", add_tags=("x",)))
    assert isinstance(reply, ContactRefusal)
    assert (reply.status, reply.code, reply.current_version) == (412, "version_conflict", 2)
    row = await card.row()
    assert (row["name"], row["version"], list(row["tags"])) == ("Other process", 2, [])
    assert [e for e, _, _ in await card.events()] == ["contact_created"], "no tag_added for a refused write"


async def test_bad_values_are_refused_with_a_sentence_and_change_nothing(card):
    await card.send(CreateContact(name="Asha"))
    reply = await card.send(EditContact(name="Asha Rao", email="not an email"))
    assert reply == ContactRefusal(400, "Email 'not an email' is not a valid email address")
    row = await card.row()
    assert (row["name"], row["version"]) == ("Asha", 1)
    assert await card.send(CreateContact(name="  ")) == ContactRefusal(400, "Name cannot be empty")


async def test_a_write_that_changes_nothing_keeps_the_version_and_emits_nothing(card):
    await card.send(CreateContact(name="Asha", tags=("vip",)))
    reply = await card.send(EditContact(name="Asha", add_tags=("VIP",), remove_tag="absent"))
    assert reply.contact.version == 1
    assert [e for e, _, _ in await card.events()] == ["contact_created", "tag_added"]


async def test_opt_out_keeps_the_first_moment_and_opt_in_clears_it(card):
    await card.send(CreateContact(name="Asha"))
    first = (await card.send(EditContact(opted_out=True))).contact
    assert first.opted_out and first.opted_out_at is not None and first.version == 2
    again = (await card.send(EditContact(opted_out=True))).contact
    assert again.opted_out_at == first.opted_out_at and again.version == 2
    back = (await card.send(EditContact(opted_out=False))).contact
    assert (back.opted_out, back.opted_out_at, back.version) == (False, None, 3)


async def test_contacts_of_two_workspaces_are_separate_cards(card):
    other = await builders.workspace(card.db)
    await card.send(CreateContact(name="Asha"))
    reply = await change_contact(card.actors, other, PHONE, CreateContact(name="Another Asha"))
    assert reply.created
    assert (await card.row())["name"] == "Asha"
