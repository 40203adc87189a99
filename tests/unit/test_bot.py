"""The FAQ bot's rules with answers held in memory: hand-off phrases, keyword matching, ties, the cache."""

import msgspec
import pytest
import trio
import trio.testing

from inbox_actors.conversations import bot
from inbox_actors.conversations.bot import (
    BOT_HAS_NO_ANSWER,
    CUSTOMER_ASKED_FOR_PERSON,
    FaqBot,
    HandOff,
    Reply,
    StoredAnswer,
)

WORKSPACE = 7


class MemoryAnswers:
    """An AnswerSource in a dict, counting its loads."""

    def __init__(self, answers: dict[int, list[StoredAnswer]] | None = None) -> None:
        self.answers = answers or {}
        self.loads = 0
        self.gate: trio.Event | None = None

    async def load_answers(self, workspace_id: int):
        self.loads += 1
        if self.gate is not None:
            await self.gate.wait()
        return list(self.answers.get(workspace_id, []))


def answer(answer_id: int, *keywords: str, text: str | None = None) -> StoredAnswer:
    return StoredAnswer(id=answer_id, keywords=keywords, answer=text or f"answer {answer_id}")


FAQ = [
    answer(1, "price", "cost", "how much", text="Plans start at $10 a month."),
    answer(2, "opening hours", "open", text="We are open 9 to 5, Monday to Friday."),
    answer(3, "delivery", "shipping", text="Delivery takes 2 to 3 days."),
    answer(4, "delivery hours", text="Couriers deliver between 8 and 8."),
]


@pytest.mark.parametrize("text", [
    "Can I talk to a HUMAN please?", "I want an agent", "real person!!", "Representative.",
    "can i speak to someone about the price", "Let me talk to somebody", "person", "customer service?",
])
async def test_asking_for_a_person_hands_off_whatever_else_matches(text):
    faq_bot = FaqBot(MemoryAnswers({WORKSPACE: FAQ}))
    assert await faq_bot.answer(WORKSPACE, text) == HandOff(CUSTOMER_ASKED_FOR_PERSON)


@pytest.mark.parametrize("text", ["humanity is great", "the agency called", "personal data?", "dehumanise"])
async def test_hand_off_words_match_whole_words_only(text):
    assert await FaqBot(MemoryAnswers()).answer(WORKSPACE, text) == HandOff(BOT_HAS_NO_ANSWER)


@pytest.mark.parametrize("text, expected", [
    ("What's the PRICE?", "Plans start at $10 a month."),
    ("how much is it", "Plans start at $10 a month."),
    ("cost", "Plans start at $10 a month."),
    ("What are your opening hours?", "We are open 9 to 5, Monday to Friday."),
    ("is delivery free", "Delivery takes 2 to 3 days."),
    # Two answers match one keyword each: the one whose keyword holds more words is more specific.
    ("what are the delivery hours", "Couriers deliver between 8 and 8."),
    # Answer 1 matches two keywords (price, cost), answer 3 one: most keywords matched wins.
    ("price and cost of shipping", "Plans start at $10 a month."),
])
async def test_the_best_matching_answer_is_given(text, expected):
    assert await FaqBot(MemoryAnswers({WORKSPACE: FAQ})).answer(WORKSPACE, text) == Reply(expected)


@pytest.mark.parametrize("text", ["prices?", "pricing", "hours", "opening", "", "   ", "🙂"])
async def test_no_matching_keyword_hands_off_with_no_answer(text):
    # Keywords are whole words and whole phrases: no stemming, no partial phrases.
    assert await FaqBot(MemoryAnswers({WORKSPACE: FAQ})).answer(WORKSPACE, text) == HandOff(BOT_HAS_NO_ANSWER)


async def test_a_full_tie_goes_to_the_oldest_answer():
    tied = [answer(9, "refund", text="newer"), answer(5, "refund", text="older")]
    assert await FaqBot(MemoryAnswers({WORKSPACE: tied})).answer(WORKSPACE, "refund?") == Reply("older")


async def test_workspaces_answer_from_their_own_answers():
    source = MemoryAnswers({WORKSPACE: FAQ, 8: [answer(20, "price", text="Ours is free.")]})
    faq_bot = FaqBot(source)
    assert await faq_bot.answer(8, "price") == Reply("Ours is free.")
    assert await faq_bot.answer(9, "price") == HandOff(BOT_HAS_NO_ANSWER)


def test_answers_are_frozen_tagged_structs():
    encoded = msgspec.json.encode([Reply("hi"), HandOff("bot_has_no_answer")])
    assert msgspec.json.decode(encoded, type=list[bot.BotAnswer]) == [Reply("hi"), HandOff("bot_has_no_answer")]
    with pytest.raises(AttributeError):
        Reply("hi").text = "changed"  # type: ignore[misc]


async def test_answers_are_cached_until_the_ttl_passes(autojump_clock):
    source = MemoryAnswers({WORKSPACE: []})
    faq_bot = FaqBot(source, cache_seconds=10)
    assert await faq_bot.answer(WORKSPACE, "price") == HandOff(BOT_HAS_NO_ANSWER)
    source.answers[WORKSPACE] = FAQ  # an edit made elsewhere (the CLI)
    for _ in range(50):
        assert await faq_bot.answer(WORKSPACE, "price") == HandOff(BOT_HAS_NO_ANSWER)
    assert source.loads == 1
    await trio.sleep(10)
    assert await faq_bot.answer(WORKSPACE, "price") == Reply("Plans start at $10 a month.")
    assert source.loads == 2
    assert faq_bot.statistics() == bot.BotStatistics(cached_workspaces=1, hits=50, loads=2)


async def test_forget_drops_the_cached_answers_at_once():
    source = MemoryAnswers({WORKSPACE: []})
    faq_bot = FaqBot(source)
    assert await faq_bot.answer(WORKSPACE, "price") == HandOff(BOT_HAS_NO_ANSWER)
    source.answers[WORKSPACE] = FAQ
    faq_bot.forget(WORKSPACE)
    assert await faq_bot.answer(WORKSPACE, "price") == Reply("Plans start at $10 a month.")


async def test_a_hand_off_request_is_answered_from_the_cached_settings():
    # The workspace's settings decide the hand-off's words, so a request for a person reads them too (once).
    source = MemoryAnswers({WORKSPACE: FAQ})
    faq_bot = FaqBot(source)
    assert await faq_bot.answer(WORKSPACE, "human please") == HandOff(CUSTOMER_ASKED_FOR_PERSON)
    assert await faq_bot.answer(WORKSPACE, "a person now") == HandOff(CUSTOMER_ASKED_FOR_PERSON)
    assert source.loads == 1


async def test_concurrent_misses_share_one_load():
    source = MemoryAnswers({WORKSPACE: FAQ})
    source.gate = trio.Event()
    faq_bot = FaqBot(source)
    results = []

    async def ask():
        results.append(await faq_bot.answer(WORKSPACE, "price"))

    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        source.gate.set()
    assert results == [Reply("Plans start at $10 a month.")] * 5
    assert source.loads == 1


async def test_a_failed_load_is_not_cached_and_waiters_try_again():
    class Flaky(MemoryAnswers):
        async def load_answers(self, workspace_id):
            if self.loads == 0:
                self.loads += 1
                raise RuntimeError("database down")
            return await super().load_answers(workspace_id)

    faq_bot = FaqBot(Flaky({WORKSPACE: FAQ}))
    with pytest.raises(RuntimeError):
        await faq_bot.answer(WORKSPACE, "price")
    assert await faq_bot.answer(WORKSPACE, "price") == Reply("Plans start at $10 a month.")


@pytest.mark.parametrize("raw, expected", [
    (["Price", " COST ", "price"], ["price", "cost"]),
    (["Opening   Hours!"], ["opening hours"]),
    (["how much", ""], ["how much"]),
])
def test_keywords_are_normalised(raw, expected):
    assert bot.keyword_list(raw) == expected


@pytest.mark.parametrize("raw, problem", [
    ([], "1 to 20 keywords"),
    ([" ", ""], "1 to 20 keywords"),
    (["?!"], "no letters or digits"),
    (["travel agent"], "hand-off phrase"),
    (["human"], "hand-off phrase"),
    ([f"k{i}" for i in range(21)], "1 to 20 keywords"),
    (["x" * 101], "at most 100"),
])
def test_bad_keywords_are_refused(raw, problem):
    with pytest.raises(bot.BotAnswerError, match=problem):
        bot.keyword_list(raw)
