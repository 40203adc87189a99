"""`inbox-actors template …` and `inbox-actors bot …`, run as separate processes against the test database."""

import pytest

from inbox_actors.conversations import bot
from inbox_actors.conversations.bot import FaqBot, HandOff, Reply
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output

ROWS = "SELECT 'template' AS kind, id FROM templates UNION ALL SELECT 'answer', id FROM bot_answers ORDER BY 1, 2"


async def test_templates_added_by_the_cli_are_listed_by_the_cli_and_the_api(service, db, database_url):
    ws = await builders.workspace(db)
    key = await builders.key(db, ws, await builders.member(db, ws), ("templates:read",))
    added = output(await cli(database_url, "template", "add", "--workspace", str(ws), "--name", "order_update",
                             "--language", "en_US", "--body", "Hi {{1}}, order {{2}} has shipped."))
    assert added == {"template_id": added["template_id"], "name": "order_update", "language": "en_US",
                     "parameter_count": 2}
    output(await cli(database_url, "template", "add", "--workspace", str(ws), "--name", "promo", "--language",
                     "pt_BR", "--body", "Promoção!", "--category", "marketing", "--parameters", "0"))

    listed = output(await cli(database_url, "template", "list", "--workspace", str(ws)))
    assert listed == {"workspace_id": ws, "templates": [
        {"name": "order_update", "language": "en_US", "category": "UTILITY", "status": "APPROVED",
         "parameter_count": 2, "body": "Hi {{1}}, order {{2}} has shipped."},
        {"name": "promo", "language": "pt_BR", "category": "MARKETING", "status": "APPROVED",
         "parameter_count": 0, "body": "Promoção!"},
    ]}
    response = await service.client.get("/api/templates", headers=bearer(key.key))
    assert response.json()["data"] == listed["templates"]

    removed = output(await cli(database_url, "template", "remove", "--workspace", str(ws), "--name", "promo",
                               "--language", "pt_BR"))
    assert removed == {"workspace_id": ws, "name": "promo", "language": "pt_BR", "removed": True}
    response = await service.client.get("/api/templates", headers=bearer(key.key))
    assert [t["name"] for t in response.json()["data"]] == ["order_update"]


async def test_bot_answers_edited_by_the_cli_reach_a_running_bot_within_its_cache_time(db, database_url):
    ws = await builders.workspace(db)
    now = [0.0]
    faq_bot = FaqBot(db, cache_seconds=10, clock=lambda: now[0])
    assert await faq_bot.answer(ws, "what does it cost?") == HandOff(bot.BOT_HAS_NO_ANSWER)

    added = output(await cli(database_url, "bot", "add", "--workspace", str(ws), "--keywords", "Price, cost,how much",
                             "--answer", "Plans start at $10 a month."))
    assert added == {"answer_id": added["answer_id"], "keywords": ["price", "cost", "how much"]}
    now[0] = 9.9  # still the cached copy: the edit was made by another process
    assert await faq_bot.answer(ws, "what does it cost?") == HandOff(bot.BOT_HAS_NO_ANSWER)
    now[0] = 10.0
    assert await faq_bot.answer(ws, "what does it cost?") == Reply("Plans start at $10 a month.")

    listed = output(await cli(database_url, "bot", "list", "--workspace", str(ws)))
    assert listed == {"workspace_id": ws, "answers": [
        {"answer_id": added["answer_id"], "keywords": ["price", "cost", "how much"],
         "answer": "Plans start at $10 a month."}]}

    removed = output(await cli(database_url, "bot", "remove", "--workspace", str(ws), "--answer",
                               str(added["answer_id"])))
    assert removed == {"answer_id": added["answer_id"], "removed": True}
    now[0] = 20.0
    assert await faq_bot.answer(ws, "what does it cost?") == HandOff(bot.BOT_HAS_NO_ANSWER)
    assert output(await cli(database_url, "bot", "list", "--workspace", str(ws)))["answers"] == []


@pytest.mark.parametrize("args, message", [
    (["template", "add", "--workspace", "{ws}", "--name", "Bad-Name", "--language", "en", "--body", "x"],
     "lowercase letters"),
    (["template", "add", "--workspace", "{ws}", "--name", "ok", "--language", "english", "--body", "x"],
     "locale code"),
    (["template", "add", "--workspace", "{ws}", "--name", "ok", "--language", "en", "--body", "Hi {{1}}",
      "--parameters", "2"], "has 1 parameter(s) but 2 were given"),
    (["template", "add", "--workspace", "{ws}", "--name", "ok", "--language", "en", "--body", "Hi {{2}}"],
     "without gaps"),
    (["template", "add", "--workspace", "{ws}", "--name", "ok", "--language", "en", "--body", "x",
      "--category", "PROMO"], "category must be one of"),
    (["template", "add", "--workspace", "{ws}", "--name", "ok", "--language", "en", "--body", "x",
      "--parameters", "many"], "invalid int"),
    (["template", "add", "--workspace", "999999", "--name", "ok", "--language", "en", "--body", "x"],
     "no workspace 999999"),
    (["template", "add", "--workspace", "{ws}", "--name", "taken", "--language", "en", "--body", "x"],
     "already has template taken in en"),
    (["template", "add", "--workspace", "{ws}", "--language", "en", "--body", "x"], "--name"),
    (["template", "remove", "--workspace", "{ws}", "--name", "nope", "--language", "en"], "no template nope"),
    (["template", "list", "--workspace", "999999"], "no workspace 999999"),
    (["bot", "add", "--workspace", "{ws}", "--keywords", " , ", "--answer", "x"], "1 to 20 keywords"),
    (["bot", "add", "--workspace", "{ws}", "--keywords", "talk to someone", "--answer", "x"], "hand-off phrase"),
    (["bot", "add", "--workspace", "{ws}", "--keywords", "price", "--answer", " "], "1 to 4,096 characters"),
    (["bot", "add", "--workspace", "999999", "--keywords", "price", "--answer", "x"], "no workspace 999999"),
    (["bot", "remove", "--workspace", "{ws}", "--answer", "999999"], "no answer 999999"),
    (["bot", "remove", "--workspace", "{ws}", "--answer", "x"], "invalid int"),
    (["bot", "list", "--workspace", "999999"], "no workspace 999999"),
    (["bot", "frobnicate"], "invalid choice"),
])
async def test_bad_arguments_exit_2_and_write_nothing(db, database_url, args, message):
    ws = await builders.workspace(db)
    await templates.add_template(db, workspace_id=ws, name="taken", language="en", body="x")
    await bot.add_answer(db, workspace_id=ws, keywords=["hours"], answer="9-5")
    before = await db.fetch(ROWS)
    result = await cli(database_url, *(arg.replace("{ws}", str(ws)) for arg in args))
    assert result.returncode == 2, result
    assert result.stdout == b""
    assert message in result.stderr.decode()
    assert await db.fetch(ROWS) == before
