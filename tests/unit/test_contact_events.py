"""The `data` of the contact webhook events: what a receiver gets for contact_created and tag_added."""

from datetime import datetime, timedelta, timezone

from inbox_actors.contacts.events import contact_event_data, tag_event_data

IST = timezone(timedelta(hours=5, minutes=30))
CREATED = datetime(2025, 3, 1, 15, 30, tzinfo=IST)


def contact_row(**changes) -> dict:
    row = {"phone": "919876543210", "name": "Asha", "email": None, "company": "Rao Textiles", "status": "New",
           "tags": None, "custom_attributes": '{"plan": "gold"}', "opted_out": False, "created_at": CREATED}
    return {**row, **changes}


def test_contact_created_carries_the_contact_and_utc_times():
    assert contact_event_data(contact_row()) == {
        "phone": "919876543210", "name": "Asha", "email": None, "company": "Rao Textiles", "status": "New",
        "tags": [], "custom_attributes": {"plan": "gold"}, "opted_out": False,
        "created_at": "2025-03-01T10:00:00Z", "at": "2025-03-01T10:00:00Z"}


def test_tag_added_carries_the_tag_and_the_tags_after_the_change():
    data = tag_event_data(contact_row(tags=["vip", "lead"]), "lead", CREATED + timedelta(minutes=5))
    assert data == {"phone": "919876543210", "name": "Asha", "tag": "lead", "tags": ["vip", "lead"],
                    "at": "2025-03-01T10:05:00Z"}
