"""Contact writes over the real socket: every route, its sentence errors, the ETag / If-Match / 412 flow, the
events each change appends to the outbox (exactly once, never for a refused write), and consent.

Refusals are checked to leave the contact as it was (`snapshot` reads the row and the outbox).
"""

from dataclasses import dataclass

import msgspec
import pytest
import trio

from inbox_actors.contacts.contact_card import KIND
from inbox_actors.domain import contact_fields
from persistence.queries import contacts as contact_queries
from tests import builders
from tests.e2e.conftest import bearer
from tests.faults import reads_a_contact

CONTACTS = "/api/contacts"
PHONE = "919876543210"
NOT_FOUND = {"error": "Contact not found"}
SHAPE = {"phone", "name", "email", "company", "status", "tags", "notes", "custom_attributes", "opted_out",
         "opted_out_at", "version", "created_at", "updated_at"}


@dataclass
class Api:
    service: object
    workspace_id: int
    author: str  # the events' actor: the key, by id
    auth: dict[str, str]

    async def create(self, **body):
        return await self.service.client.post(CONTACTS, json={"phone": PHONE, "name": "Asha", **body},
                                              headers=self.auth)

    async def put(self, field: str, value, phone: str = PHONE, headers: dict | None = None, **extra):
        return await self.service.client.put(f"{CONTACTS}/{phone}/{field}", json={field: value, **extra},
                                             headers={**self.auth, **(headers or {})})

    async def call(self, method: str, path: str, headers: dict | None = None, **options):
        return await self.service.client.request(method, f"{CONTACTS}{path}", headers={**self.auth,
                                                                                      **(headers or {})}, **options)

    async def events(self, event: str | None = None) -> list[tuple[str, str, dict]]:
        rows = await self.service.db.fetch(
            "SELECT event, actor, correlation_id, data FROM webhook_outbox WHERE workspace_id = $1 ORDER BY id",
            self.workspace_id)
        found = [(r["event"], r["actor"], msgspec.json.decode(r["data"])) for r in rows]
        return [e for e in found if event is None or e[0] == event]

    async def snapshot(self, phone: str = PHONE):
        row = await contact_queries.find_contact(self.service.db, self.workspace_id, phone)
        return (None if row is None else dict(row)), await self.events()


async def make_api(service, plan: str = "scale", scopes: tuple[str, ...] = ("contacts",)) -> Api:
    workspace_id = await builders.workspace(service.db, plan)
    member_id = await builders.member(service.db, workspace_id)
    issued = await builders.key(service.db, workspace_id, member_id, scopes)
    return Api(service, workspace_id, f"api_key:{issued.id}", bearer(issued.key))


@pytest.fixture
async def api(service) -> Api:
    return await make_api(service)


@pytest.fixture
async def asha(api) -> dict:
    response = await api.create(email="asha@example.com", tags=["vip"], attributes={"plan": "gold"})
    assert response.status_code == 201, response.text
    return response.json()


# -- create --------------------------------------------------------------------------------------------------


async def test_create_answers_201_with_the_contact_its_etag_and_one_contact_created_event(api):
    response = await api.create(email="asha@example.com", company="Acme", status="Lead", tags=["vip", "trial"],
                                notes="Met at the expo", attributes={"plan": "gold", "seats": 3})
    assert response.status_code == 201, response.text
    contact = response.json()
    assert set(contact) == SHAPE
    assert contact | {"created_at": None, "updated_at": None} == {
        "phone": PHONE, "name": "Asha", "email": "asha@example.com", "company": "Acme", "status": "Lead",
        "tags": ["vip", "trial"], "notes": "Met at the expo", "custom_attributes": {"plan": "gold", "seats": 3},
        "opted_out": False, "opted_out_at": None, "version": 1, "created_at": None, "updated_at": None}
    assert response.headers["ETag"] == '"1"'
    created = await api.events("contact_created")
    assert len(created) == 1
    _, actor, data = created[0]
    assert actor == api.author
    assert data["phone"] == PHONE and data["name"] == "Asha" and data["tags"] == ["vip", "trial"]
    assert [(d["tag"], a) for _, a, d in await api.events("tag_added")] == [("vip", api.author),
                                                                             ("trial", api.author)]


async def test_create_defaults(api):
    contact = (await api.create(attributes={})).json()
    assert (contact["status"], contact["tags"], contact["custom_attributes"], contact["email"]) == (
        "New", [], {}, None)


async def test_create_on_an_existing_phone_updates_it_with_200_and_no_second_contact_created(api, asha):
    response = await api.create(phone="+91 98765 43210", name="Asha Rao", tags=["VIP", "paid"],
                                attributes={"region": "south"})
    assert response.status_code == 200, response.text
    contact = response.json()
    assert contact["name"] == "Asha Rao" and contact["email"] == "asha@example.com"
    assert contact["tags"] == ["vip", "paid"]
    assert contact["custom_attributes"] == {"plan": "gold", "region": "south"}
    assert contact["version"] == 2 and response.headers["ETag"] == '"2"'
    assert len(await api.events("contact_created")) == 1
    assert [d["tag"] for _, _, d in await api.events("tag_added")] == ["vip", "paid"]


async def test_a_retried_create_changes_nothing(api, asha):
    response = await api.create(email="asha@example.com", tags=["vip"], attributes={"plan": "gold"})
    assert response.status_code == 200
    assert response.json() == asha


@pytest.mark.parametrize("body, sentence", [
    ({"name": "Asha"}, "Phone number is required"),
    ({"phone": PHONE}, "Name is required"),
    ({"phone": "", "name": "Asha"}, "Phone number is required"),
    ({"phone": "98-76", "name": "Asha"}, "Invalid phone number: phone may hold only digits, a leading + and spaces"),
    ({"phone": "12345", "name": "Asha"}, "Invalid phone number: phone must have 8 to 15 digits with its country code"),
    ({"phone": 919876543210, "name": "Asha"}, "phone must be a string"),
    ({"phone": PHONE, "name": "Asha", "colour": "red"},
     ("Unknown field 'colour'; this call accepts phone, name, email, company, status, tags, notes, attributes, "
      "version")),
    ({"phone": PHONE, "name": "Asha", "email": "nope"}, "Email 'nope' is not a valid email address"),
    ({"phone": PHONE, "name": "x" * 101}, "Name must be at most 100 characters"),
    ({"phone": PHONE, "name": "Asha", "tags": "vip"}, "tags must be an array"),
    ({"phone": PHONE, "name": "Asha", "tags": ["ok", 7]}, "tags[1] must be a string"),
    ({"phone": PHONE, "name": "Asha", "attributes": {"deep": {"a": 1}}},
     "Attribute 'deep' must be a string, a number, a boolean or null"),
    ({"phone": PHONE, "name": "Asha", "status": None}, "status must be a string"),
])
async def test_create_refuses_a_bad_body_with_a_sentence_and_creates_nothing(api, body, sentence):
    response = await api.service.client.post(CONTACTS, json=body, headers=api.auth)
    assert response.status_code == 400
    assert response.json() == {"error": sentence}
    assert await api.snapshot() == (None, [])


@pytest.mark.parametrize("content, sentence", [
    (b"", "A JSON body is required"),
    (b"{not json", "The request body is not valid JSON"),
    (b"[1, 2]", "The request body must be a JSON object"),
])
async def test_create_refuses_a_missing_or_malformed_body(api, content, sentence):
    response = await api.service.client.post(CONTACTS, content=content, headers={
        **api.auth, "Content-Type": "application/json"})
    assert (response.status_code, response.json()) == (400, {"error": sentence})


# -- field updates -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, stored", [
    ("name", "  Asha Rao ", "Asha Rao"),
    ("status", "Qualified", "Qualified"),
    ("email", "asha.rao@example.org", "asha.rao@example.org"),
    ("email", None, None),
    ("company", "Rao Textiles", "Rao Textiles"),
    ("email", "", None),
    ("notes", "Prefers calls after 6pm.\nSpeaks Kannada.", "Prefers calls after 6pm.\nSpeaks Kannada."),
])
async def test_put_sets_one_field_bumps_the_version_and_emits_no_event(api, asha, field, value, stored):
    response = await api.put(field, value)
    assert response.status_code == 200, response.text
    contact = response.json()
    assert contact[field] == stored
    assert contact["version"] == 2 and response.headers["ETag"] == '"2"'
    assert contact["updated_at"] > asha["updated_at"]
    untouched = {k for k in SHAPE if k not in {field, "version", "updated_at"}}
    assert {k: contact[k] for k in untouched} == {k: asha[k] for k in untouched}
    assert [e for e, _, _ in await api.events()] == ["contact_created", "tag_added"]


@pytest.mark.parametrize("path", ["9876543210", "+919876543210", "+91%2098765%2043210"])
async def test_two_spellings_of_a_phone_are_one_contact(api, asha, path):
    response = await api.put("name", "Asha Rao", phone=path)
    assert response.status_code == 200, response.text
    assert response.json()["phone"] == PHONE
    assert await api.service.db.fetchval("SELECT count(*) FROM contacts WHERE workspace_id = $1",
                                         api.workspace_id) == 1


@pytest.mark.parametrize("field, value, sentence", [
    ("name", "", "Name cannot be empty"),
    ("name", None, "name must be a string"),
    ("name", 42, "name must be a string"),
    ("status", "", "Status cannot be empty"),
    ("status", "s" * 51, "Status must be at most 50 characters"),
    ("email", "asha@", "Email 'asha@' is not a valid email address"),
    ("email", ["a@b.co"], "email must be a string or null"),
    ("company", "c" * 201, "Company must be at most 200 characters"),
    ("notes", "n" * 5001, "Notes must be at most 5000 characters"),
    ("notes", "nul\u0000", "Notes may not contain control characters"),
    ("tags", ["a,b"], "Tag 'a,b' contains a comma; give each tag as its own string"),
    ("tags", {"vip": True}, "tags must be an array"),
    ("attributes", ["plan"], "attributes must be an object"),
    ("attributes", {}, "Attributes must name at least one attribute"),
])
async def test_put_refuses_a_bad_value_and_changes_nothing(api, asha, field, value, sentence):
    before = await api.snapshot()
    response = await api.put(field, value)
    assert (response.status_code, response.json()) == (400, {"error": sentence})
    assert await api.snapshot() == before


@pytest.mark.parametrize("field, value", [("name", "x"), ("status", "x"), ("email", "x@y.co"), ("company", "x"),
                                          ("notes", "x"), ("tags", ["x"]), ("attributes", {"x": 1})])
async def test_put_refuses_a_missing_field_or_an_unknown_one(api, asha, field, value):
    before = await api.snapshot()
    missing = await api.call("PUT", f"/{PHONE}/{field}", json={})
    assert missing.status_code == 400
    assert missing.json()["error"] in {f"{field.capitalize()} is required", f"{field.capitalize()} are required"}
    unknown = await api.call("PUT", f"/{PHONE}/{field}", json={field: value, "extra": 1})
    assert unknown.status_code == 400
    assert unknown.json()["error"].startswith("Unknown field 'extra'; this call accepts")
    assert await api.snapshot() == before


@pytest.mark.parametrize("method, path, body", [
    ("PUT", "/name", {"name": "x"}),
    ("PUT", "/status", {"status": "x"}),
    ("PUT", "/email", {"email": "x@y.co"}),
    ("PUT", "/company", {"company": "x"}),
    ("PUT", "/notes", {"notes": "x"}),
    ("PUT", "/tags", {"tags": ["x"]}),
    ("POST", "/tags", {"tags": ["x"]}),
    ("DELETE", "/tags/x", None),
    ("PUT", "/attributes", {"attributes": {"x": 1}}),
    ("DELETE", "/attributes/x", None),
    ("POST", "/opt-out", None),
    ("POST", "/opt-in", None),
])
async def test_every_write_to_an_unknown_contact_is_404_and_creates_nothing(api, method, path, body):
    response = await api.call(method, f"/{PHONE}{path}", json=body)
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert await api.snapshot() == (None, [])


async def test_a_contact_of_another_workspace_is_not_found(service, api, asha):
    stranger = await make_api(service)
    response = await stranger.put("name", "Hijacked")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert (await api.snapshot())[0]["name"] == "Asha"


async def test_a_malformed_phone_in_the_path_is_400(api):
    response = await api.put("name", "x", phone="not-a-phone")
    assert response.status_code == 400
    assert response.json() == {"error": "Invalid phone number: phone may hold only digits, a leading + and spaces"}


# -- tags ----------------------------------------------------------------------------------------------------


async def test_put_tags_replaces_the_set_and_emits_tag_added_only_for_new_tags(api, asha):
    response = await api.put("tags", ["VIP", "paid", "renewal", "paid"])
    assert response.status_code == 200
    assert response.json()["tags"] == ["vip", "paid", "renewal"]
    added = [(d["tag"], d["tags"]) for _, _, d in await api.events("tag_added")]
    assert added == [("vip", ["vip"]), ("paid", ["vip", "paid", "renewal"]), ("renewal", ["vip", "paid", "renewal"])]
    cleared = await api.put("tags", [])
    assert cleared.json()["tags"] == [] and cleared.json()["version"] == 3
    assert len(await api.events("tag_added")) == 3


async def test_post_tags_adds_without_replacing(api, asha):
    response = await api.call("POST", f"/{PHONE}/tags", json={"tags": ["paid", "Vip"]})
    assert response.status_code == 200, response.text
    assert response.json()["tags"] == ["vip", "paid"]
    assert [d["tag"] for _, _, d in await api.events("tag_added")] == ["vip", "paid"]


async def test_delete_tag_removes_it_ignoring_case_and_a_missing_tag_changes_nothing(api, asha):
    response = await api.call("DELETE", f"/{PHONE}/tags/VIP")
    assert response.status_code == 200
    assert (response.json()["tags"], response.json()["version"]) == ([], 2)
    again = await api.call("DELETE", f"/{PHONE}/tags/VIP")
    assert (again.status_code, again.json()["version"]) == (200, 2)


async def test_a_tag_with_spaces_and_slashes_is_removed_by_its_url_encoded_name(api, asha):
    await api.call("POST", f"/{PHONE}/tags", json={"tags": ["follow up/June"]})
    response = await api.call("DELETE", f"/{PHONE}/tags/follow%20up%2FJune")
    assert response.status_code == 200 and response.json()["tags"] == ["vip"]


async def test_too_many_tags_is_refused(api, asha):
    response = await api.put("tags", [f"t{i}" for i in range(contact_fields.MAX_TAGS + 1)])
    assert (response.status_code, response.json()) == (400, {"error": "A contact holds at most 50 tags"})


# -- custom attributes ---------------------------------------------------------------------------------------


async def test_put_attributes_merges_and_null_removes_a_key(api, asha):
    response = await api.put("attributes", {"seats": 3, "plan": None, "trial": False, "absent": None})
    assert response.status_code == 200, response.text
    assert response.json()["custom_attributes"] == {"seats": 3, "trial": False}
    merged = await api.put("attributes", {"region": "south"})
    assert merged.json()["custom_attributes"] == {"seats": 3, "trial": False, "region": "south"}


async def test_delete_attribute_removes_one_key_and_a_missing_key_changes_nothing(api, asha):
    await api.put("attributes", {"order id": "A-1"})
    response = await api.call("DELETE", f"/{PHONE}/attributes/order%20id")
    assert response.status_code == 200
    assert response.json()["custom_attributes"] == {"plan": "gold"}
    version = response.json()["version"]
    again = await api.call("DELETE", f"/{PHONE}/attributes/order%20id")
    assert (again.status_code, again.json()["version"]) == (200, version)


# -- consent -------------------------------------------------------------------------------------------------


async def test_opt_out_then_opt_in(api, asha):
    out = await api.call("POST", f"/{PHONE}/opt-out")
    assert out.status_code == 200, out.text
    contact = out.json()
    assert contact["opted_out"] is True and contact["opted_out_at"] is not None and contact["version"] == 2
    repeated = await api.call("POST", f"/{PHONE}/opt-out")
    assert repeated.json()["opted_out_at"] == contact["opted_out_at"] and repeated.json()["version"] == 2
    back = await api.call("POST", f"/{PHONE}/opt-in")
    assert (back.json()["opted_out"], back.json()["opted_out_at"], back.json()["version"]) == (False, None, 3)
    row, _ = await api.snapshot()
    assert (row["opted_out"], row["opted_out_at"]) == (False, None)


async def test_opt_out_refuses_a_body_it_does_not_know(api, asha):
    response = await api.call("POST", f"/{PHONE}/opt-out", json={"reason": "asked"})
    assert response.status_code == 400
    assert response.json() == {"error": "Unknown field 'reason'; this call accepts version"}


# -- versions ------------------------------------------------------------------------------------------------


async def test_if_match_with_the_current_version_succeeds(api, asha):
    response = await api.put("name", "Asha Rao", headers={"If-Match": '"1"'})
    assert (response.status_code, response.headers["ETag"]) == (200, '"2"')
    weak = await api.put("status", "Won", headers={"If-Match": 'W/"2"'})
    assert (weak.status_code, weak.json()["version"]) == (200, 3)
    anything = await api.put("status", "Lost", headers={"If-Match": "*"})
    assert anything.status_code == 200


async def test_a_stale_if_match_is_412_version_conflict_and_changes_nothing(api, asha):
    await api.put("name", "Asha Rao")
    before = await api.snapshot()
    response = await api.put("tags", ["new"], headers={"If-Match": '"1"'})
    assert response.status_code == 412
    body = response.json()
    assert body["error"] == "version_conflict" and body["current_version"] == 2
    assert "version 2" in body["message"]
    assert response.headers["ETag"] == '"2"'
    assert await api.snapshot() == before, "no change and no tag_added event"


async def test_version_in_the_body_works_like_if_match(api, asha):
    stale = await api.put("name", "Nope", version=7)
    assert stale.status_code == 412 and stale.json()["error"] == "version_conflict"
    fresh = await api.put("name", "Asha Rao", version=1)
    assert (fresh.status_code, fresh.json()["version"]) == (200, 2)
    out = await api.call("POST", f"/{PHONE}/opt-out", json={"version": 1})
    assert out.status_code == 412


async def test_create_with_a_version_checks_it_against_the_existing_contact(api, asha):
    stale = await api.create(name="Nope", version=5)
    assert stale.status_code == 412
    absent = await api.service.client.post(CONTACTS, json={"phone": "14155550100", "name": "New", "version": 1},
                                           headers=api.auth)
    assert absent.status_code == 412 and absent.json()["error"] == "version_conflict"
    assert (await api.snapshot("14155550100"))[0] is None


@pytest.mark.parametrize("header, version, sentence", [
    ("1", None, None),
    ("abc", None, 'If-Match must be one version in quotes, as the ETag gives it, like "3"'),
    ('"1", "2"', None, 'If-Match must be one version in quotes, as the ETag gives it, like "3"'),
    ('"1"', 2, "If-Match names version 1 but the body names version 2"),
    (None, 0, "version must be a positive whole number"),
])
async def test_if_match_and_version_are_validated(api, asha, header, version, sentence):
    headers = {} if header is None else {"If-Match": header}
    extra = {} if version is None else {"version": version}
    response = await api.put("name", "Asha Rao", headers=headers, **extra)
    if sentence is None:
        assert response.status_code == 200
    else:
        assert (response.status_code, response.json()) == (400, {"error": sentence})


async def test_fifty_concurrent_edits_naming_one_version_leave_exactly_one_winner(api, asha):
    statuses: list[tuple[int, str]] = []

    async def edit(n: int) -> None:
        response = await api.put("name", f"Writer {n}", headers={"If-Match": '"1"'})
        statuses.append((response.status_code, f"Writer {n}"))
        if response.status_code == 412:
            assert response.json()["error"] == "version_conflict"

    async with trio.open_nursery() as nursery:
        for n in range(50):
            nursery.start_soon(edit, n)
    winners = [name for status, name in statuses if status == 200]
    assert len(winners) == 1
    assert sorted(status for status, _ in statuses) == [200] + [412] * 49
    row, _ = await api.snapshot()
    assert (row["name"], row["version"]) == (winners[0], 2)


async def test_concurrent_tag_adds_without_a_version_all_land(api, asha):
    async with trio.open_nursery() as nursery:
        for n in range(20):
            nursery.start_soon(lambda n=n: api.call("POST", f"/{PHONE}/tags", json={"tags": [f"t{n}"]}))
    row, events = await api.snapshot()
    assert row["version"] == 21 and len(row["tags"]) == 21
    assert len([e for e in events if e[0] == "tag_added"]) == 21


# -- access and failures ---------------------------------------------------------------------------------------


async def test_no_token_gets_the_spec_sentence(api):
    response = await api.service.client.post(CONTACTS, json={"phone": PHONE, "name": "Asha"})
    assert (response.status_code, response.json()) == (401, {"error": "Unauthorized: No token provided"})


async def test_a_growth_key_may_write_contacts(service):
    growth = await make_api(service, plan="growth")
    assert (await growth.create()).status_code == 201


async def test_a_read_only_key_and_a_key_without_contacts_scope_are_refused(service):
    reader = await make_api(service, scopes=("contacts:read",))
    response = await reader.create()
    assert (response.status_code, response.json()["error"]) == (403, "read_only_key")
    inbox_only = await make_api(service, scopes=("inbox",))
    response = await inbox_only.create()
    assert (response.status_code, response.json()["error"]) == (403, "scope_denied")
    assert response.json()["requiredPermission"] == "contacts"


async def test_an_unexpected_failure_is_the_spec_500_sentence_and_the_card_recovers(api, asha):
    broken = api.service.db_of(api.workspace_id).fail_next(reads_a_contact, RuntimeError("disk on fire"))
    response = await api.put("name", "Asha Rao")
    assert (response.status_code, response.json()) == (500, {"error": "An internal error occurred. Please try again."})
    assert broken.raised == 1
    assert (await api.put("name", "Asha Rao")).status_code == 200
    stats = api.service.actors.statistics(KIND, f"{api.workspace_id}:{PHONE}")
    assert stats is not None and stats.restarts == 1
