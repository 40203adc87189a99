"""The AI agent's knowledge and pricing sheets over HTTP (`/api/bot/articles`, `/api/bot/knowledge/search`,
`/api/bot/pricing-sheets`, `/api/bot/quote`): how each route maps its use case's outcome, a CSV body in and out,
and the stable error shape. The rules themselves are the use cases' tests (tests/integration)."""

from __future__ import annotations

from tests import builders
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import assert_stable, bearer

CSV = ("name,price,currency,unit,valid_from,valid_until,notes\r\n"
       "Haircut,19.00,EUR,per visit,,,Adults\r\n"
       "\"Colour, full\",65.50,EUR,,2020-01-01,2099-12-31,\r\n")


async def keys(service, *scopes: str) -> list[str]:
    workspace_id, _, admin, _ = await scale_workspace(service.db)
    return [(await builders.key(service.db, workspace_id, admin, (scope,))).key for scope in scopes]


async def test_an_article_is_added_and_found_by_the_knowledge_search(service):
    editor, reader = await keys(service, "ai_kb_edit", "ai_agent:read")
    added = await service.client.post("/api/bot/articles", headers=bearer(editor), json={
        "title": "Prices", "body": "# Price list\nThe price of a haircut is on the board.\n\n# Hours\n9 to 5."})
    assert added.status_code == 201, added.text
    article = added.json()
    assert [(p["heading"], p["text"]) for p in article["passages"]] == [
        ("Price list", "The price of a haircut is on the board."), ("Hours", "9 to 5.")]

    found = await service.client.get("/api/bot/knowledge/search", headers=bearer(reader),
                                     params={"q": "What are your prices?"})
    assert found.status_code == 200, found.text
    hits = found.json()["data"]
    assert [(hit["ref"], hit["title"]) for hit in hits] == [(f"p{article['passages'][0]['id']}", "Price list")]
    assert hits[0]["rank"] > 0

    listed = await service.client.get("/api/bot/articles", headers=bearer(reader))
    assert [(a["id"], a["passages"]) for a in listed.json()["data"]] == [(article["id"], 2)]
    changed = await service.client.patch(f"/api/bot/articles/{article['id']}", headers=bearer(editor),
                                         json={"title": "Salon prices"})
    assert changed.status_code == 200 and changed.json()["title"] == "Salon prices", changed.text
    assert_stable(await service.client.post("/api/bot/articles", headers=bearer(editor),
                                            json={"title": " ", "body": "x"}), 400, "invalid_title")
    assert_stable(await service.client.get("/api/bot/knowledge/search", headers=bearer(reader)), 400, "invalid_q")
    removed = await service.client.delete(f"/api/bot/articles/{article['id']}", headers=bearer(editor))
    assert removed.json() == {"article_id": article["id"], "removed": True}
    assert_stable(await service.client.get(f"/api/bot/articles/{article['id']}", headers=bearer(reader)), 404,
                  "not_found")


async def test_a_pricing_sheet_imported_from_csv_is_exported_identically_and_quoted(service):
    editor, reader = await keys(service, "ai_pricing_edit", "ai_agent:read")
    made = await service.client.post("/api/bot/pricing-sheets", headers=bearer(editor), json={"name": "Salon"})
    assert made.status_code == 201, made.text
    sheet_id = made.json()["id"]
    assert_stable(await service.client.post("/api/bot/pricing-sheets", headers=bearer(editor),
                                            json={"name": "SALON"}), 409, "name_taken")

    path = f"/api/bot/pricing-sheets/{sheet_id}/items.csv"
    imported = await service.client.put(path, headers={**bearer(editor), "Content-Type": "text/csv"},
                                        content=("\ufeff" + CSV).encode())
    assert imported.status_code == 200, imported.text
    assert (imported.json()["name"], imported.json()["items"]) == ("Salon", 2)
    exported = await service.client.get(path, headers=bearer(reader))
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"].startswith("text/csv")
    assert f'filename="pricing-sheet-{sheet_id}.csv"' in exported.headers["content-disposition"]
    assert exported.text == CSV

    quoted = await service.client.get("/api/bot/quote", headers=bearer(reader), params={"q": "haircuts"})
    assert quoted.status_code == 200, quoted.text
    assert [(q["name"], q["price"], q["currency"], q["sheet"]) for q in quoted.json()["data"]] == [
        ("Haircut", "19.00", "EUR", "Salon")]

    item = await service.client.post(f"/api/bot/pricing-sheets/{sheet_id}/items", headers=bearer(editor),
                                     json={"name": "Beard trim", "price": "7.5", "currency": "EUR"})
    assert item.status_code == 201 and item.json()["price"] == "7.50", item.text
    item_id = item.json()["id"]
    assert_stable(await service.client.post(f"/api/bot/pricing-sheets/{sheet_id}/items", headers=bearer(editor),
                                            json={"name": "X", "price": 7.5, "currency": "EUR"}), 400,
                  "invalid_price")
    changed = await service.client.patch(f"/api/bot/pricing-sheets/{sheet_id}/items/{item_id}",
                                         headers=bearer(editor), json={"price": "8.00"})
    assert changed.status_code == 200 and changed.json()["price"] == "8.00", changed.text
    assert_stable(await service.client.patch(f"/api/bot/pricing-sheets/{sheet_id}/items/{item_id}",
                                             headers=bearer(editor), json={"item_id": 1}), 400, "invalid_body")
    shown = await service.client.get(f"/api/bot/pricing-sheets/{sheet_id}", headers=bearer(reader))
    assert [i["name"] for i in shown.json()["items"]] == ["Haircut", "Colour, full", "Beard trim"]
    assert (await service.client.delete(f"/api/bot/pricing-sheets/{sheet_id}/items/{item_id}",
                                        headers=bearer(editor))).json() == {"item_id": item_id, "removed": True}
    renamed = await service.client.patch(f"/api/bot/pricing-sheets/{sheet_id}", headers=bearer(editor),
                                         json={"name": "Salon 2027"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Salon 2027", renamed.text
    gone = await service.client.delete(f"/api/bot/pricing-sheets/{sheet_id}", headers=bearer(editor))
    assert gone.json() == {"sheet_id": sheet_id, "removed": True, "items": 2}
    assert_stable(await service.client.get(path, headers=bearer(reader)), 404, "not_found")


async def test_a_bad_csv_row_is_a_400_in_the_stable_shape_and_changes_nothing(service):
    (editor,) = await keys(service, "ai_pricing_edit")
    sheet_id = (await service.client.post("/api/bot/pricing-sheets", headers=bearer(editor),
                                          json={"name": "Salon"})).json()["id"]
    path = f"/api/bot/pricing-sheets/{sheet_id}/items.csv"
    await service.client.put(path, headers={**bearer(editor), "Content-Type": "text/csv"}, content=CSV.encode())

    bad = CSV + "Perm,80.00,euros\r\n"
    answer = await service.client.put(path, headers={**bearer(editor), "Content-Type": "text/csv"},
                                      content=bad.encode())
    body = assert_stable(answer, 400, "invalid_csv")
    assert body["message"] == "Row 4: currency must be a currency code of 3 capital letters, such as EUR."
    latin1 = await service.client.put(path, headers={**bearer(editor), "Content-Type": "text/csv"},
                                      content="name,price,currency\r\nCafé,2.00,EUR\r\n".encode("latin-1"))
    assert assert_stable(latin1, 400, "invalid_csv")["message"] == "The CSV is not UTF-8 text."
    assert (await service.client.get(path, headers=bearer(editor))).status_code == 403  # a write key reads nothing
    rows = await service.db.fetch("SELECT name FROM pricing_items WHERE sheet_id = $1 ORDER BY id", sheet_id)
    assert [row["name"] for row in rows] == ["Haircut", "Colour, full"]


async def test_a_key_without_the_permission_is_403(service):
    reader, knowledge_editor = await keys(service, "ai_agent:read", "ai_kb_edit")
    for method, path, json in (("POST", "/api/bot/pricing-sheets", {"name": "Salon"}),
                               ("POST", "/api/bot/articles", {"title": "T", "body": "B"})):
        denied = await service.client.request(method, path, headers=bearer(reader), json=json)
        assert denied.status_code == 403, denied.text
        assert isinstance(denied.json()["error"], str) and denied.json()["message"], denied.text
    denied = await service.client.put("/api/bot/pricing-sheets/1/items.csv", headers=bearer(knowledge_editor),
                                      content=CSV.encode())
    assert denied.status_code == 403 and denied.json()["requiredPermission"] == "ai_pricing_edit", denied.text
    assert (await service.client.get("/api/bot/quote", headers=bearer(knowledge_editor),
                                     params={"q": "haircut"})).status_code == 403
