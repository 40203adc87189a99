"""The AI agent's pure rules: the amount guardrail, the prompt within its budget, model prices and the service's
model settings."""

from __future__ import annotations

from decimal import Decimal

import pytest

from inbox_actors.ai_agent.amount_guardrail import amount, stated_amounts, unquoted_amounts
from inbox_actors.ai_agent.knowledge import Passage
from inbox_actors.ai_agent.prompt import TOOLS, build_messages, estimate_tokens, system_text
from inbox_actors.ai_agent.usage import ModelPrices, parse_prices
from inbox_actors.conversations.bot import BotProfile, BotQuestion, Turn
from inbox_http.settings import NO_MODEL, SIMULATED_MODEL, Settings, SettingsError

# -- the amount guardrail -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply, quoted, invented", [
    ("Basic plan: 19.00 EUR per month.", ["19.00"], []),
    ("The Basic plan is €19 a month.", ["19.00"], []),
    ("That is 19,00 € per month.", ["19.00"], []),
    ("Of course! With 90% off, that comes to just 1.99 EUR.", ["19.00"], ["90", "1.99"]),
    ("It costs $25.", [], ["25"]),
    ("Returns within 30 days; we open 9 to 5, call 0800 123 456.", [], []),
    ("Pro is 1,299.50 USD, Team is USD 2 000.", ["1299.50"], ["2 000"]),
    ("Ten euros, no digits at all.", [], []),
    ("A 10 percent discount applies.", [], ["10"]),
])
def test_a_reply_may_state_only_quoted_amounts(reply, quoted, invented):
    assert unquoted_amounts(reply, quoted) == invented


def test_amounts_are_compared_as_numbers_whatever_their_marks():
    assert amount("19") == amount("19.00") == amount("19,00") == Decimal("19")
    assert amount("1,299.50") == amount("1.299,50") == amount("1 299,50") == Decimal("1299.50")
    assert amount("1,299") == Decimal("1299")
    assert stated_amounts("2 items of 12 EUR") == ["12"]


# -- the prompt ---------------------------------------------------------------------------------------------


def passage(n: int, text: str = "x" * 400) -> Passage:
    return Passage(ref=f"p{n}", title=f"Title {n}", text=text, rank=1.0 / n)


def test_the_system_message_carries_the_rules_the_style_and_each_passage_with_its_id():
    profile = BotProfile(persona="Ava", system_prompt="We sell bikes.", tone="formal", answer_length="short",
                         customer_language=False, language="german")
    text = system_text(profile, [Passage("p3", 'Re"turns', "Within 30 days </passage> ok", 1.0)])
    assert text.startswith("You are Ava of this business")
    assert "We sell bikes." in text and "a formal tone" in text and "answer in German" in text
    assert "call quote_price" in text and "call hand_off" in text
    assert text.endswith("## Knowledge\n<passage id=\"p3\" title=\"Re'turns\">Within 30 days </ passage> ok</passage>")
    assert system_text(BotProfile(), []).endswith("## Knowledge\n(none found)")
    assert {tool["function"]["name"] for tool in TOOLS} == {"quote_price", "hand_off"}


def test_passages_take_at_most_half_the_budget_best_first_and_turns_the_rest_newest_first():
    turns = [Turn("customer" if n % 2 == 0 else "business", f"turn {n} " + "y" * 200) for n in range(40)]
    messages, kept = build_messages(BotProfile(), [passage(n) for n in range(1, 30)], turns, 1,
                                    context_tokens=2000, answer_tokens=300)
    assert [p.ref for p in kept] == [f"p{n}" for n in range(1, len(kept) + 1)] and 1 <= len(kept) < 29
    assert sum(estimate_tokens(m["content"]) for m in messages) <= 2000 - 300 + 50
    assert messages[-1] == {"role": "assistant", "content": turns[-1].text}
    assert messages[0]["role"] == "system" and len(messages) < 41


def test_the_unanswered_words_are_kept_whatever_the_budget_and_joined_as_one_question():
    turns = [Turn("business", "Hello"), Turn("customer", "a" * 5000), Turn("customer", "and the price?")]
    messages, _ = build_messages(BotProfile(), [], turns, 2, context_tokens=1000, answer_tokens=300)
    assert messages[1:] == [{"role": "user", "content": "a" * 5000 + "\nand the price?"}]
    question = BotQuestion(workspace_id=1, conversation_id=2, turns=tuple(turns), unanswered=2)
    assert question.text == "a" * 5000 + "\nand the price?"


# -- prices and settings ------------------------------------------------------------------------------------


def test_model_prices_are_dollars_per_million_tokens_kept_in_millionths():
    prices = parse_prices("gpt-4o-mini=0.15/0.60, local=0/0")
    assert prices.cost_micros("gpt-4o-mini", 1_000_000, 1_000_000) == 750_000
    assert prices.cost_micros("gpt-4o-mini", 1000, 200) == 270
    assert prices.cost_micros("unknown", 1000, 200) == 0 and ModelPrices().cost_micros("x", 5, 5) == 0
    for bad in ("gpt=1", "gpt=a/b", "=1/2", "gpt=-1/2"):
        with pytest.raises(ValueError):
            parse_prices(bad)


def test_the_model_is_the_built_in_simulator_unless_set_and_none_means_the_faq_bot():
    default = Settings.from_environment({})
    assert default.uses_model_simulator and default.has_model and default.model == SIMULATED_MODEL
    real = Settings.from_environment({"INBOX_MODEL_URL": "http://127.0.0.1:11434/v1", "INBOX_MODEL": "llama3.1",
                                      "INBOX_MODEL_KEY": "sk-secret", "INBOX_MODEL_PRICES": "llama3.1=0/0"})
    assert not real.uses_model_simulator and real.has_model and real.model == "llama3.1"
    assert real.model_prices.cost_micros("llama3.1", 10, 10) == 0
    assert not Settings.from_environment({"INBOX_MODEL_URL": NO_MODEL}).has_model
    # Beside a real platform no simulator runs, so without a model endpoint the FAQ bot answers.
    beside_platform = Settings.from_environment({"WHATSAPP_API_URL": "https://graph.facebook.com/v21.0",
                                                 "WHATSAPP_ACCESS_TOKEN": "t", "WHATSAPP_APP_SECRET": "s",
                                                 "WHATSAPP_VERIFY_TOKEN": "v"})
    assert not beside_platform.has_model
    for env, complaint in [({"INBOX_MODEL_URL": "ftp://x"}, "http(s) URL"),
                           ({"INBOX_MODEL_URL": "http://x/v1"}, "INBOX_MODEL must name"),
                           ({"INBOX_MODEL_PRICES": "x=1"}, "INBOX_MODEL_PRICES"),
                           ({"INBOX_MODEL_TIMEOUT": "0"}, "INBOX_MODEL_TIMEOUT")]:
        with pytest.raises(SettingsError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
            Settings.from_environment(env)
