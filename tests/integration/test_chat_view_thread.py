"""How much of a chat's thread the agent workspace shows (`use_cases/chat_view.py`): the newest THREAD_SIZE messages
when it opens, THREAD_SIZE more each time "Earlier messages" asks, up to THREAD_MOST, with a real conversation actor
on a real PostgreSQL."""

from __future__ import annotations

from inbox_actors.use_cases import chat_view
from inbox_actors.use_cases.chat_view import THREAD_MOST, THREAD_SIZE, ChatView

ASHA = "919811700001"
OLDER = 95


async def _with_older_messages(use_cases, count: int) -> None:
    """The customer's word, and `count` older messages of theirs before it ("older 1" the oldest)."""
    await use_cases.customer_writes(ASHA, "Where is my order?")
    chat = await use_cases.db.fetchval("SELECT id FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                       use_cases.workspace_id, ASHA)
    await use_cases.db.execute(
        "INSERT INTO messages (workspace_id, conversation_id, platform_message_id, direction, sender_type, type,"
        " text, status, sent_at) SELECT $1, $2, 'wamid.older' || n, 'inbound', 'customer', 'text', 'older ' || n,"
        " 'received', now() - interval '1 day' + n * interval '1 minute' FROM generate_series(1, $3::int) AS n",
        use_cases.workspace_id, chat, count)


async def test_a_chat_opens_with_its_newest_messages_and_earlier_ones_come_on_asking(use_cases):
    ann = await use_cases.member(role="admin")
    await _with_older_messages(use_cases, OLDER)
    total = await use_cases.db.fetchval("SELECT count(*) FROM messages m JOIN conversations c"
                                        " ON c.id = m.conversation_id WHERE c.phone = $1", ASHA)
    assert total > 2 * THREAD_SIZE

    opened = await chat_view.open_chat_view(use_cases.deps, ann, ASHA)
    assert isinstance(opened, ChatView)
    assert len(opened.messages) == THREAD_SIZE and opened.shown == THREAD_SIZE and not opened.widened
    assert opened.messages[-1].text == "Where is my order?"       # the newest last
    assert opened.earlier_messages and opened.more_shown == 2 * THREAD_SIZE

    more = await chat_view.chat_view(use_cases.deps, ann, ASHA, shown=opened.more_shown)
    assert isinstance(more, ChatView) and more.widened
    assert len(more.messages) == 2 * THREAD_SIZE
    assert [m.id for m in more.messages[-THREAD_SIZE:]] == [m.id for m in opened.messages]

    everything = await chat_view.chat_view(use_cases.deps, ann, ASHA, shown=3 * THREAD_SIZE)
    assert len(everything.messages) == total and not everything.earlier_messages
    assert everything.more_shown is None and everything.messages[0].text == "older 1"


async def test_the_size_asked_for_is_kept_within_the_first_screen_and_the_most(use_cases):
    assert chat_view.thread_size(None) == THREAD_SIZE
    assert chat_view.thread_size("80") == 80
    for odd in ("", "lots", "-5", "0", "1e3", "9" * 5000):
        assert chat_view.thread_size(odd) == THREAD_SIZE, odd
    assert chat_view.thread_size(str(THREAD_MOST + 1)) == THREAD_MOST

    ann = await use_cases.member(role="admin")
    await _with_older_messages(use_cases, THREAD_MOST + 10)
    most = await chat_view.chat_view(use_cases.deps, ann, ASHA, shown=10_000)
    assert isinstance(most, ChatView) and len(most.messages) == THREAD_MOST
    # Beyond the most there is no more to ask for here: the Reporting API's thread has them.
    assert most.earlier_messages and most.more_shown is None
