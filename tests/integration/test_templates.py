"""Templates and bot answers as the operator sets them up, and the lookups the send path and the simulator use."""

from datetime import datetime, timezone

import pytest

from inbox_actors.access import accounts
from inbox_actors.bot import settings as bot_settings
from inbox_actors.conversations import bot
from inbox_actors.conversations.bot import FaqBot, HandOff, Reply
from inbox_actors.platform import templates
from persistence.queries import templates as template_queries
from tests import builders


async def test_add_counts_parameters_and_lists_by_name_then_language(db):
    ws = await builders.workspace(db)
    added = await templates.add_template(db, workspace_id=ws, name="order_update", language="pt_BR",
                                         body="Olá {{1}}, seu pedido {{2}} saiu. {{1}}!")
    assert (added.name, added.language, added.parameter_count) == ("order_update", "pt_BR", 2)
    await templates.add_template(db, workspace_id=ws, name="order_update", language="en_US",
                                 body="Hi {{1}}, order {{2}} shipped.", parameters=2)
    await templates.add_template(db, workspace_id=ws, name="a_promo", language="en", body="Sale today!",
                                 category_name="marketing", status_name="PENDING")
    listed = await templates.list_templates(db, workspace_id=ws)
    assert [(t.name, t.language) for t in listed] == [("a_promo", "en"), ("order_update", "en_US"),
                                                      ("order_update", "pt_BR")]
    assert listed[0] == templates.Template(name="a_promo", language="en", category="MARKETING", status="PENDING",
                                           parameter_count=0, body="Sale today!")
    assert [t.name for t in await templates.list_templates(db, workspace_id=ws, status_name="approved")] == [
        "order_update", "order_update"]


@pytest.mark.parametrize("options, problem", [
    ({"name": "Order_Update"}, "lowercase letters"),
    ({"name": "order-update"}, "lowercase letters"),
    ({"name": ""}, "lowercase letters"),
    ({"name": "x" * 513}, "lowercase letters"),
    ({"language": "english"}, "locale code"),
    ({"language": "en_us"}, "locale code"),
    ({"language": "EN"}, "locale code"),
    ({"body": ""}, "1 to 1,024 characters"),
    ({"body": "x" * 1025}, "1 to 1,024 characters"),
    ({"body": "Hi {{name}}"}, "numbered"),
    ({"body": "Hi {{0}}"}, "numbered"),
    ({"body": "Hi {{1}} and {{3}}"}, r"without gaps; missing \{\{2\}\}"),
    ({"body": "Hi {{1}}", "parameters": 2}, "has 1 parameter"),
    ({"body": "Hi", "parameters": 1}, "has 0 parameter"),
    ({"category_name": "PROMO"}, "category must be one of"),
    ({"status_name": "LIVE"}, "status must be one of"),
    ({"workspace_id": 999_999}, "no workspace 999999"),
])
async def test_bad_templates_are_refused_and_nothing_is_written(db, options, problem):
    ws = await builders.workspace(db)
    arguments = {"workspace_id": ws, "name": "welcome", "language": "en", "body": "Hello {{1}}", **options}
    with pytest.raises(templates.TemplateError, match=problem):
        await templates.add_template(db, **arguments)
    assert await db.fetchval("SELECT count(*) FROM templates") == 0


async def test_one_template_per_name_and_language(db):
    ws = await builders.workspace(db)
    await templates.add_template(db, workspace_id=ws, name="welcome", language="en", body="Hello {{1}}")
    with pytest.raises(templates.TemplateError, match="already has template welcome in en"):
        await templates.add_template(db, workspace_id=ws, name="welcome", language="en", body="Other")
    other_ws = await builders.workspace(db)
    await templates.add_template(db, workspace_id=other_ws, name="welcome", language="en", body="Hello")
    assert await db.fetchval("SELECT count(*) FROM templates") == 2


async def test_remove(db):
    ws = await builders.workspace(db)
    await templates.add_template(db, workspace_id=ws, name="welcome", language="en", body="Hello")
    removed = await templates.remove_template(db, workspace_id=ws, name="welcome", language="en")
    assert removed.name == "welcome"
    with pytest.raises(templates.TemplateError, match="no template welcome in en"):
        await templates.remove_template(db, workspace_id=ws, name="welcome", language="en")


async def test_lookups_by_platform_number_see_only_approved_templates_of_that_number(db):
    created = await accounts.create_workspace(db, name="A", plan="scale", phone_number_id="111")
    other = await accounts.create_workspace(db, name="B", plan="scale", phone_number_id="222")
    ws = created.workspace_id
    await templates.add_template(db, workspace_id=ws, name="welcome", language="en_US", body="Hi {{1}}")
    await templates.add_template(db, workspace_id=ws, name="draft", language="en", body="Hi", status_name="PENDING")
    await templates.add_template(db, workspace_id=other.workspace_id, name="theirs", language="en", body="Hi")

    found = await template_queries.find_template_for_number(db, "111", "welcome", "en_US")
    assert (found["workspace_id"], found["parameter_count"], found["status"]) == (ws, 1, "APPROVED")
    assert await template_queries.find_template_for_number(db, "111", "welcome", "en") is None
    assert await template_queries.find_template_for_number(db, "111", "draft", "en") is None
    assert await template_queries.find_template_for_number(db, "111", "theirs", "en") is None
    assert await template_queries.find_template_for_number(db, "999", "welcome", "en_US") is None

    assert await template_queries.template_name_exists_for_number(db, "111", "welcome")
    assert not await template_queries.template_name_exists_for_number(db, "111", "draft")
    assert not await template_queries.template_name_exists_for_number(db, "111", "theirs")

    assert (await template_queries.find_template(db, ws, "draft", "en"))["status"] == "PENDING"
    assert await template_queries.find_template(db, ws, "draft", "en", approved_only=True) is None
    assert await template_queries.find_template(db, other.workspace_id, "welcome", "en_US") is None


async def test_the_database_refuses_rows_outside_the_vocabulary(db):
    ws = await builders.workspace(db)
    with pytest.raises(Exception, match="templates_status"):
        await db.execute("INSERT INTO templates (workspace_id, name, language, status, body)"
                         " VALUES ($1, 'x', 'en', 'LIVE', 'b')", ws)


# -- the bot's answers in PostgreSQL --------------------------------------------------------------------------


async def test_faq_bot_answers_from_stored_answers(db):
    ws = await builders.workspace(db)
    faq_bot = FaqBot(db)
    assert await faq_bot.answer(ws, "What is the price?") == HandOff(bot.BOT_HAS_NO_ANSWER)
    added = await bot.add_answer(db, workspace_id=ws, keywords=["Price", "cost"], answer=" From $10 a month. ")
    assert added.keywords == ["price", "cost"] and added.answer == "From $10 a month."
    faq_bot.forget(ws)
    assert await faq_bot.answer(ws, "What is the price?") == Reply("From $10 a month.")
    assert await faq_bot.answer(ws, "can I talk to a person") == HandOff(bot.CUSTOMER_ASKED_FOR_PERSON)
    other_ws = await builders.workspace(db)
    assert await faq_bot.answer(other_ws, "price") == HandOff(bot.BOT_HAS_NO_ANSWER)


async def test_bot_answers_list_and_remove(db):
    ws = await builders.workspace(db)
    first = await bot.add_answer(db, workspace_id=ws, keywords=["hours"], answer="9 to 5")
    second = await bot.add_answer(db, workspace_id=ws, keywords=["refund", "return policy"], answer="30 days")
    assert await bot.list_answers(db, workspace_id=ws) == [first, second]
    await _remove(db, ws, first.answer_id)
    assert await bot.list_answers(db, workspace_id=ws) == [second]
    with pytest.raises(bot_settings.BotRefusal, match=f"no answer {first.answer_id}"):
        await _remove(db, ws, first.answer_id)
    other_ws = await builders.workspace(db)
    with pytest.raises(bot_settings.BotRefusal, match="no answer"):
        await _remove(db, other_ws, second.answer_id)
    for options, problem in (({"workspace_id": 999_999}, "no workspace"), ({"answer": "  "}, "1 to 4,096"),
                             ({"keywords": ["agent"]}, "hand-off phrase")):
        with pytest.raises(bot.BotAnswerError, match=problem):
            await bot.add_answer(db, **{"workspace_id": ws, "keywords": ["x"], "answer": "y", **options})
    assert await db.fetchval("SELECT count(*) FROM bot_answers") == 1


async def _remove(db, workspace_id: int, answer_id: int) -> None:
    """An answer removed as the operator's command line removes it (audited, as no member)."""
    await bot_settings.remove_answer(db, workspace_id, None, "cli", answer_id, datetime.now(timezone.utc))
