"""`GET /api/templates` against the real server: who may list, the shape, the order and the filters."""

import pytest

from inbox_actors.platform import templates
from tests import builders
from tests.e2e.conftest import bearer

TEMPLATES = "/api/templates"


async def key_of_new_workspace(db, scopes: tuple[str, ...] = ("all",), plan: str = "scale") -> tuple[int, str]:
    """A workspace and the plaintext of a key an admin of it created."""
    workspace_id = await builders.workspace(db, plan)
    issued = await builders.key(db, workspace_id, await builders.member(db, workspace_id), scopes)
    return workspace_id, issued.key


async def seed(db, workspace_id: int) -> None:
    for name, language, body, options in (
        ("welcome", "pt_BR", "Olá {{1}}", {}),
        ("order_update", "en_US", "Order {{1}} ships {{2}}", {}),
        ("welcome", "en", "Hello {{1}}", {}),
        ("spring_sale", "en", "Sale!", {"category_name": "MARKETING", "status_name": "PENDING"}),
    ):
        await templates.add_template(db, workspace_id=workspace_id, name=name, language=language, body=body,
                                     **options)


async def test_lists_the_workspace_templates_by_name_then_language(service, db):
    workspace_id, key = await key_of_new_workspace(db, ("templates",))
    await seed(db, workspace_id)
    other_workspace_id, _ = await key_of_new_workspace(db)
    await templates.add_template(db, workspace_id=other_workspace_id, name="not_mine", language="en", body="x")

    response = await service.client.get(TEMPLATES, headers=bearer(key))
    assert response.status_code == 200
    assert response.json() == {"data": [
        {"name": "order_update", "language": "en_US", "category": "UTILITY", "status": "APPROVED",
         "parameter_count": 2, "body": "Order {{1}} ships {{2}}"},
        {"name": "spring_sale", "language": "en", "category": "MARKETING", "status": "PENDING",
         "parameter_count": 0, "body": "Sale!"},
        {"name": "welcome", "language": "en", "category": "UTILITY", "status": "APPROVED",
         "parameter_count": 1, "body": "Hello {{1}}"},
        {"name": "welcome", "language": "pt_BR", "category": "UTILITY", "status": "APPROVED",
         "parameter_count": 1, "body": "Olá {{1}}"},
    ]}


async def test_filters(service, db):
    workspace_id, key = await key_of_new_workspace(db, ("templates:read",))
    await seed(db, workspace_id)

    async def names(query: str) -> list[tuple[str, str]]:
        response = await service.client.get(f"{TEMPLATES}?{query}", headers=bearer(key))
        assert response.status_code == 200, response.text
        return [(t["name"], t["language"]) for t in response.json()["data"]]

    assert await names("status=APPROVED") == [("order_update", "en_US"), ("welcome", "en"), ("welcome", "pt_BR")]
    assert await names("status=pending") == [("spring_sale", "en")]
    assert await names("name=welcome") == [("welcome", "en"), ("welcome", "pt_BR")]
    assert await names("name=welcome&language=pt_BR") == [("welcome", "pt_BR")]
    assert await names("name=nothing") == []

    refused = await service.client.get(f"{TEMPLATES}?status=live", headers=bearer(key))
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_status"
    assert "APPROVED" in refused.json()["message"]


@pytest.mark.parametrize("plan, scopes", [
    ("growth", ("templates",)), ("growth", ("templates:read",)), ("scale", ("all",)),
    ("growth", ("inbox", "templates:read")),
])
async def test_core_api_keys_with_the_templates_scope_may_list(service, db, plan, scopes):
    issued = await builders.plaintext_key(db, plan=plan, scopes=scopes)
    response = await service.client.get(TEMPLATES, headers=bearer(issued.key))
    assert response.status_code == 200
    assert response.json() == {"data": []}


async def test_refusals_follow_the_ladder(service, db):
    no_scope = await builders.plaintext_key(db, scopes=("inbox",))
    response = await service.client.get(TEMPLATES, headers=bearer(no_scope.key))
    assert response.status_code == 403
    assert response.json()["error"] == "scope_denied"
    assert response.json()["requiredPermission"] == "templates:read"

    starter = await builders.plaintext_key(db, plan="starter", scopes=("templates",))
    response = await service.client.get(TEMPLATES, headers=bearer(starter.key))
    assert (response.status_code, response.json()["error"]) == (403, "api_not_in_plan")

    # A key never exceeds its creator: an agent without the templates permission.
    limited = await builders.plaintext_key(db, role="agent", scopes=("templates",), permissions=["inbox"])
    response = await service.client.get(TEMPLATES, headers=bearer(limited.key))
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")

    response = await service.client.get(TEMPLATES)
    assert response.status_code == 401


async def test_listing_is_a_read_only_route(service, db):
    issued = await builders.plaintext_key(db, scopes=("templates",))
    response = await service.client.post(TEMPLATES, headers=bearer(issued.key), json={})
    assert response.status_code == 405
