"""The AI agent's knowledge at the use cases' level, on a real PostgreSQL and without HTTP: who may read and change
articles, the codes of the fields' rules, the passages an article is saved as, the audit log, and retrieval (the
agent's entry point, `knowledge.retrieve`): stemmed in the workspace's language, ranked, one workspace's alone."""

from __future__ import annotations

from inbox_actors.ai_agent import knowledge
from inbox_actors.use_cases import ai_knowledge, bot
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Done, Refused
from tests import builders

READER = ["ai_agent:read"]
EDITOR = ["ai_kb_edit"]
SHIPPING = ("Shipping", "# Delivery\nWe deliver in two days.\n\n# Price\nThe price of delivery is 5 euros; free "
                        "over 50 euros.")


def refused(outcome, status: int, code: str) -> bool:
    return isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code)


async def audit(use_cases) -> list[tuple]:
    rows = await use_cases.db.fetch("SELECT action, member_id, via, subject FROM team_audit WHERE workspace_id = $1"
                                    " ORDER BY id", use_cases.workspace_id)
    return [tuple(row) for row in rows]


async def add(use_cases, editor, title: str, body: str) -> knowledge.ArticleView:
    added = await use_cases.run(editor, ai_knowledge.ADD_ARTICLE, {"title": title, "body": body})
    assert isinstance(added, Done), added
    return added.data


async def test_reading_needs_ai_agent_and_changing_needs_ai_kb_edit(use_cases):
    outsider = await use_cases.member(permissions=["inbox", "ai_pricing_edit"])
    reader = await use_cases.member(permissions=READER)
    editor = await use_cases.member(permissions=EDITOR)
    for use_case, arguments in ((ai_knowledge.LIST_ARTICLES, {}), (ai_knowledge.READ_ARTICLE, {"article_id": 1}),
                                (ai_knowledge.SEARCH, {"q": "price"})):
        denied = await use_cases.run(outsider, use_case, arguments)
        assert refused(denied, 403, "permission_denied") and "ai_agent:read" in denied.message
        assert not refused(await use_cases.run(reader, use_case, arguments), 403, "permission_denied")
    for use_case, arguments in ((ai_knowledge.ADD_ARTICLE, {"title": "T", "body": "B"}),
                                (ai_knowledge.CHANGE_ARTICLE, {"article_id": 1, "title": "T"}),
                                (ai_knowledge.REMOVE_ARTICLE, {"article_id": 1})):
        denied = await use_cases.run(reader, use_case, arguments)
        assert refused(denied, 403, "permission_denied") and "needs the ai_kb_edit permission" in denied.message
        assert not use_case.allows(outsider) and use_case.allows(editor)
    assert await audit(use_cases) == []


async def test_a_broken_field_rule_answers_its_code_and_changes_nothing(use_cases):
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    cases = [
        ({"title": "", "body": "B"}, "invalid_title"), ({"title": "   ", "body": "B"}, "invalid_title"),
        ({"title": "x" * 201, "body": "B"}, "invalid_title"), ({"title": "a\nb", "body": "B"}, "invalid_title"),
        ({"title": "T", "body": ""}, "invalid_article_body"),
        ({"title": "T", "body": " \n\t "}, "invalid_article_body"),
        ({"title": "T", "body": "x" * 50_001}, "invalid_article_body"),
        ({"title": "T", "body": "nul\x00"}, "invalid_article_body"),
        ({"title": "T"}, "invalid_arguments"), ({"title": "T", "body": "B", "extra": 1}, "invalid_arguments"),
    ]
    for arguments, code in cases:
        outcome = await use_cases.run(editor, ai_knowledge.ADD_ARTICLE, arguments)
        assert refused(outcome, 400, code), (arguments, outcome)
    too_long = await use_cases.run(editor, ai_knowledge.ADD_ARTICLE, {"title": "T", "body": "x" * 50_001})
    assert too_long.message.startswith("body must be 1 to 50,000 characters of Markdown")
    for q in ("", "x" * 1_001, "two\nlines", None):
        assert refused(await use_cases.run(editor, ai_knowledge.SEARCH, {"q": q}), 400, "invalid_q"), q
    assert refused(await use_cases.run(editor, ai_knowledge.CHANGE_ARTICLE, {"article_id": 1, "body": ""}), 400,
                   "invalid_article_body")
    listed = await use_cases.run(editor, ai_knowledge.LIST_ARTICLES, {})
    assert listed.data.data == [] and await audit(use_cases) == []


async def test_an_article_is_saved_with_its_passages_changed_and_removed_audited(use_cases):
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    added = await add(use_cases, editor, "  Shipping   guide ", SHIPPING[1])
    assert added.title == "Shipping guide" and added.updated_by.user_id == editor.member_id
    assert [(p.position, p.heading, p.text) for p in added.passages] == [
        (1, "Delivery", "We deliver in two days."),
        (2, "Price", "The price of delivery is 5 euros; free over 50 euros.")]
    listed = await use_cases.run(editor, ai_knowledge.LIST_ARTICLES, {})
    assert [(a.id, a.title, a.passages) for a in listed.data.data] == [(added.id, "Shipping guide", 2)]

    changed = await use_cases.run(editor, ai_knowledge.CHANGE_ARTICLE,
                                  {"article_id": added.id, "body": "Intro.\n\n## Returns\nWithin 30 days."})
    assert isinstance(changed, Done) and changed.data.title == "Shipping guide"  # the title was kept
    assert [(p.heading, p.text) for p in changed.data.passages] == [("Shipping guide", "Intro."),
                                                                      ("Returns", "Within 30 days.")]
    renamed = await use_cases.run(editor, ai_knowledge.CHANGE_ARTICLE, {"article_id": added.id, "title": "Ship"})
    assert renamed.data.body == "Intro.\n\n## Returns\nWithin 30 days."
    assert renamed.data.passages[0].heading == "Ship"  # the passages were split again under the new title
    read = await use_cases.run(editor, ai_knowledge.READ_ARTICLE, {"article_id": added.id})
    assert read.data == renamed.data

    removed = await use_cases.run(editor, ai_knowledge.REMOVE_ARTICLE, {"article_id": added.id})
    assert removed.data == knowledge.ArticleRemoved(added.id, True)
    for use_case in (ai_knowledge.READ_ARTICLE, ai_knowledge.REMOVE_ARTICLE):
        gone = await use_cases.run(editor, use_case, {"article_id": added.id})
        assert refused(gone, 404, "not_found") and f"no article {added.id}" in gone.message
    for article_id in (0, -1, 2**63, 2**70):  # ids no article has are missing, never a database error
        assert refused(await use_cases.run(editor, ai_knowledge.READ_ARTICLE, {"article_id": article_id}), 404,
                       "not_found")
        assert refused(await use_cases.run(editor, ai_knowledge.CHANGE_ARTICLE,
                                           {"article_id": article_id, "title": "T"}), 404, "not_found")
    assert await use_cases.db.fetchval("SELECT count(*) FROM ai_passages WHERE article_id = $1", added.id) == 0
    subject = f"bot_article:{added.id}"
    assert await audit(use_cases) == [
        ("bot_article.added", editor.member_id, editor.author, subject),
        ("bot_article.changed", editor.member_id, editor.author, subject),
        ("bot_article.changed", editor.member_id, editor.author, subject),
        ("bot_article.removed", editor.member_id, editor.author, subject)]


async def test_another_workspace_s_article_is_not_found(use_cases):
    other = await builders.workspace(use_cases.db)
    stranger = await use_cases.member(permissions=[*EDITOR, *READER], workspace_id=other)
    theirs = await add(use_cases, stranger, *SHIPPING)
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    for use_case, arguments in ((ai_knowledge.READ_ARTICLE, {}), (ai_knowledge.CHANGE_ARTICLE, {"title": "Mine"}),
                                (ai_knowledge.REMOVE_ARTICLE, {})):
        outcome = await use_cases.run(editor, use_case, {"article_id": theirs.id, **arguments})
        assert refused(outcome, 404, "not_found"), use_case.name
    assert (await use_cases.run(stranger, ai_knowledge.READ_ARTICLE, {"article_id": theirs.id})).data == theirs


async def test_retrieval_stems_in_the_workspace_s_language_and_ranks_the_more_relevant_first(use_cases):
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    article = await add(use_cases, editor, *SHIPPING)
    await add(use_cases, editor, "Price list", "# Price\nOur price list: a haircut's price is on the price board.")
    found = await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "What are your prices?")
    assert [p.title for p in found] == ["Price", "Price"]
    assert found[0].text.startswith("Our price list") and found[0].rank > found[1].rank > 0
    assert found[1] == knowledge.Passage(f"p{article.passages[1].id}", "Price", article.passages[1].text,
                                         found[1].rank)
    # Any word of the question may match; stop words and punctuation fall away.
    delivered = await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "how long does a delivery take??")
    assert delivered[0].ref == f"p{article.passages[0].id}" and delivered[0].title == "Delivery"
    assert await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "the of and a") == []
    assert await knowledge.retrieve(use_cases.db, use_cases.workspace_id, " ?! ") == []
    assert len(await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "price delivery", limit=1)) == 1

    searched = await use_cases.run(editor, ai_knowledge.SEARCH, {"q": "What are your prices?"})
    assert isinstance(searched, Done) and searched.data.data == found


async def test_an_faq_answer_is_knowledge_too(use_cases):
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    answer = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["opening hours", "open"],
                                                          "answer": "We are open 9 to 5, Monday to Friday."})
    found = await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "When do you open on Mondays?")
    assert found == [knowledge.Passage(f"faq{answer.data.answer_id}", "opening hours, open",
                                       "We are open 9 to 5, Monday to Friday.", found[0].rank)]


async def test_another_workspace_s_knowledge_is_never_retrieved(use_cases):
    other = await builders.workspace(use_cases.db)
    stranger = await use_cases.member(permissions=[*EDITOR, *READER], workspace_id=other)
    await add(use_cases, stranger, *SHIPPING)
    await use_cases.run(stranger, bot.ADD_ANSWER, {"keywords": ["price"], "answer": "Ten euros."})
    assert await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "price delivery") == []
    assert len(await knowledge.retrieve(use_cases.db, other, "price delivery")) == 3


async def test_a_workspace_s_language_decides_the_stemming(use_cases):
    await use_cases.db.execute("INSERT INTO bot_settings (workspace_id, language) VALUES ($1, 'simple')",
                               use_cases.workspace_id)
    editor = await use_cases.member(permissions=[*EDITOR, *READER])
    await add(use_cases, editor, *SHIPPING)
    answer = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["prices"], "answer": "See the board."})
    languages = await use_cases.db.fetch(
        "SELECT language::text FROM ai_passages WHERE workspace_id = $1 UNION ALL"
        " SELECT language::text FROM bot_answers WHERE workspace_id = $1", use_cases.workspace_id)
    assert {row[0] for row in languages} == {"simple"}
    # Unstemmed, "prices" finds only the answer that says "prices", not the passage that says "price".
    found = await knowledge.retrieve(use_cases.db, use_cases.workspace_id, "prices")
    assert [p.ref for p in found] == [f"faq{answer.data.answer_id}"]


async def test_the_operator_s_changes_are_audited_as_no_member(use_cases):
    operator = Caller.operator(use_cases.workspace_id)
    added = await add(use_cases, operator, *SHIPPING)
    assert added.updated_by is None
    assert await audit(use_cases) == [("bot_article.added", None, "cli", f"bot_article:{added.id}")]
