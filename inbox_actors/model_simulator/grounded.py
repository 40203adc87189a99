"""What the simulated model says, as pure functions: the answers a grounded model would give the service's agent.

This is the contract with the agent. The agent sends a `system` message ending in a knowledge block (a line
`## Knowledge`, then passages written `<passage id="ID" title="TITLE">TEXT</passage>`, or `(none found)`), the
chat's turns, and after the customer's last message(s) possibly this turn's tool calls and their results. It
offers the tools `quote_price` `{"query"}` and `hand_off` `{"reason"}`. The question is the text of the customer's
messages since the last plain assistant reply. The answer is decided in this order:
1. the last message is a tool result: `quote_price` with items states up to three of them, their prices copied
   exactly (the agent checks every amount against the tool results); without items it calls `hand_off`; the
   result of `hand_off` gets empty content;
2. the question says "ignore ... instruction": a gullible model, it states an invented amount (the agent's
   guardrail has to catch it);
3. the question asks about a price and `quote_price` is offered: it calls `quote_price`;
4. it answers with the opening of the passage sharing most words with the question (the grounding); when no
   passage shares any, it calls `hand_off`;
5. a model without `hand_off` to call says "I don't know.".
`completion` wraps a reply in OpenAI's response body, with usage counted as a quarter of the characters.
"""

from __future__ import annotations

import math
import re
import secrets
import time
from typing import Any

import msgspec

MODEL_ID = "simulated-grounded"
QUOTE_PRICE = "quote_price"
HAND_OFF = "hand_off"

MAX_PRICE_ITEMS = 3
MAX_ANSWER_CHARS = 600
ANSWER_SENTENCES = 2
NO_PRICE_REASON = "no price for that"
NO_KNOWLEDGE_REASON = "nothing in the knowledge"
DONT_KNOW = "I don't know."
# The amount is invented on purpose: it is in no tool result and no passage, so the agent's guardrail must refuse it.
INVENTED_OFFER = "Of course! With 90% off, that comes to just 1.99 EUR."

STOP_WORDS = frozenset("""
    a about also am an and any are as at be been but by can could did do does for from get had has have hello hey
    hi how i if in is it its just know me my of on or our please so some tell than thank thanks that the their
    them there these they this those to us want was we were what when where which who why will with would you
    your yours
""".split())

_PRICE_WORDS = re.compile(r"\b(?:price|prices|pricing|cost|costs|how\s+much|fee|fees|quote|rate|rates|tariff)\b",
                          re.IGNORECASE)
_INJECTION = re.compile(r"ignore.*instruction", re.IGNORECASE | re.DOTALL)
_KNOWLEDGE_HEADING = re.compile(r"^## Knowledge[ \t]*$", re.MULTILINE)
_PASSAGE = re.compile(r'<passage\s+id="(?P<id>[^"]*)"\s+title="(?P<title>.*?)"\s*>(?P<text>.*?)</passage>', re.DOTALL)
_WORD = re.compile(r"[^\W_]+")          # letters and digits, in any script
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_WHITESPACE = re.compile(r"\s")


class Passage(msgspec.Struct, frozen=True):
    id: str
    title: str
    text: str


class Answer(msgspec.Struct, frozen=True):
    """A reply in words (finish_reason "stop")."""

    content: str


class ToolCall(msgspec.Struct, frozen=True):
    """A reply calling one function tool (finish_reason "tool_calls"); `arguments` is the JSON string sent, kept as
    a string so a fault can send one that does not parse."""

    name: str
    arguments: str

    @classmethod
    def of(cls, name: str, arguments: dict[str, Any]) -> ToolCall:
        return cls(name, msgspec.json.encode(arguments).decode())


Reply = Answer | ToolCall


# -- reading the request ---------------------------------------------------------------------------------------

def message_text(message: dict[str, Any]) -> str:
    """A message's content as text: a string as is, a list of content parts as their texts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (part.get("text") for part in content if isinstance(part, dict))
        return " ".join(text for text in texts if isinstance(text, str))
    return ""


def _tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _call_function(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    return function if isinstance(function, dict) else {}


def offered_tools(body: dict[str, Any]) -> frozenset[str]:
    """The names of the function tools the model may call; none when `tool_choice` is "none"."""
    tools = body.get("tools")
    if body.get("tool_choice") == "none" or not isinstance(tools, list):
        return frozenset()
    return frozenset(name for tool in tools if isinstance(tool, dict) and tool.get("type", "function") == "function"
                     and isinstance(name := _call_function(tool).get("name"), str))


def question_of(messages: list[dict[str, Any]]) -> str:
    """The customer's messages since the last assistant reply in words (this turn's tool calls are no reply)."""
    asked: list[str] = []
    for message in reversed(messages):
        role = message.get("role")
        if role == "assistant" and not _tool_calls(message):
            break
        if role == "user" and (text := message_text(message).strip()):
            asked.append(text)
    return " ".join(reversed(asked))


def knowledge_passages(system_text: str) -> list[Passage]:
    """The passages of the knowledge block that ends the system message (none after `(none found)`)."""
    heading = _KNOWLEDGE_HEADING.search(system_text)
    if heading is None:
        return []
    # From the first heading on: a passage's own text may hold a line "## Knowledge" and still be a passage.
    block = system_text[heading.end():]
    return [Passage(found["id"], found["title"], found["text"]) for found in _PASSAGE.finditer(block)]


def _system_text(messages: list[dict[str, Any]]) -> str:
    return next((message_text(message) for message in messages if message.get("role") == "system"), "")


# -- words --------------------------------------------------------------------------------------------------------

def fold(word: str) -> str:
    """A lowercase word without its plural ending, so "prices" meets "price", "boxes" "box", "policies" "policy"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("ie"):          # "cookie" meets "cookies", folded to "cooky" above
        return word[:-2] + "y"
    if len(word) > 4 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The distinct words of `text` that carry meaning: lowercase, stop words dropped, plurals folded."""
    return {fold(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS}


def asks_price(question: str) -> bool:
    return _PRICE_WORDS.search(question) is not None


def price_query(question: str) -> str:
    """What to look up in the price sheets: the question without its price words and stop words (the whole
    question when nothing is left)."""
    rest = _PRICE_WORDS.sub(" ", question)
    words = [word for word in _WORD.findall(rest) if word.lower() not in STOP_WORDS]
    return " ".join(words) or question.strip()


def best_passage(question: str, passages: list[Passage]) -> Passage | None:
    """The passage (title and text) holding most of the question's words; the earliest on a tie; None when no
    passage holds any."""
    wanted = content_words(question)
    best, best_score = None, 0
    for passage in passages:
        if not passage.text.strip():
            continue
        score = len(wanted & content_words(f"{passage.title} {passage.text}"))
        if score > best_score:
            best, best_score = passage, score
    return best


def opening(text: str) -> str:
    """The first two sentences of a passage, unchanged, at most 600 characters (cut at a space when longer)."""
    text = text.strip()
    ends = [found.end() for found in _SENTENCE_END.finditer(text)]
    answer = text[:ends[ANSWER_SENTENCES - 1]] if len(ends) >= ANSWER_SENTENCES else text
    if len(answer) <= MAX_ANSWER_CHARS:
        return answer
    head = answer[:MAX_ANSWER_CHARS + 1]
    spaces = [found.start() for found in _WHITESPACE.finditer(head)]
    return (head[:spaces[-1]] if spaces else answer[:MAX_ANSWER_CHARS]).rstrip()


# -- deciding -----------------------------------------------------------------------------------------------------

def _hand_off(reason: str, offered: frozenset[str]) -> Reply:
    return ToolCall.of(HAND_OFF, {"reason": reason}) if HAND_OFF in offered else Answer(DONT_KNOW)


def _price_items(result: str) -> list[dict[str, Any]]:
    try:
        decoded = msgspec.json.decode(result)
    except msgspec.DecodeError:
        return []
    items = decoded.get("items") if isinstance(decoded, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _field(item: dict[str, Any], name: str) -> str:
    value = item.get(name)
    return "" if value is None else str(value)


def price_sentence(items: list[dict[str, Any]]) -> str:
    """Up to three items as one sentence, "Basic plan: 19.00 EUR per month; ...", each price as the tool wrote it."""
    stated = []
    for item in items[:MAX_PRICE_ITEMS]:
        amount = " ".join(part for part in (_field(item, "price"), _field(item, "currency")) if part)
        unit = _field(item, "unit")
        stated.append(f"{_field(item, 'name')}: {amount}" + (f" per {unit}" if unit else ""))
    return "; ".join(stated) + "."


def _after_tool(result: dict[str, Any], messages: list[dict[str, Any]], offered: frozenset[str]) -> Reply:
    names = {call.get("id"): _call_function(call).get("name") for message in messages for call in _tool_calls(message)}
    name = names.get(result.get("tool_call_id"))
    if name == QUOTE_PRICE:
        items = _price_items(message_text(result))
        return Answer(price_sentence(items)) if items else _hand_off(NO_PRICE_REASON, offered)
    if name == HAND_OFF:
        return Answer("")           # the agent hands the chat to a person and sends nothing
    return Answer(DONT_KNOW)        # a result of a call this model never made: calling again could loop


def decide(body: dict[str, Any]) -> Reply:
    """The reply to a chat completion request (already checked: `messages` is a list of objects)."""
    messages: list[dict[str, Any]] = body["messages"]
    offered = offered_tools(body)
    if messages and messages[-1].get("role") == "tool":
        return _after_tool(messages[-1], messages, offered)
    question = question_of(messages)
    if _INJECTION.search(question):
        return Answer(INVENTED_OFFER)
    if QUOTE_PRICE in offered and asks_price(question):
        return ToolCall.of(QUOTE_PRICE, {"query": price_query(question)})
    passage = best_passage(question, knowledge_passages(_system_text(messages)))
    if passage is not None:
        return Answer(opening(passage.text))
    return _hand_off(NO_KNOWLEDGE_REASON, offered)


# -- the response -------------------------------------------------------------------------------------------------

def _tokens(characters: int) -> int:
    return math.ceil(characters / 4)


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """A quarter of the characters of every message's content and every tool call's arguments, rounded up."""
    characters = 0
    for message in messages:
        characters += len(message_text(message))
        for call in _tool_calls(message):
            arguments = _call_function(call).get("arguments")
            characters += len(arguments) if isinstance(arguments, str) else 0
    return _tokens(characters)


def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """`reply` as OpenAI's chat completion body, echoing the request's model."""
    if isinstance(reply, ToolCall):
        produced = reply.arguments
        finish_reason = "tool_calls"
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_" + secrets.token_hex(12), "type": "function",
            "function": {"name": reply.name, "arguments": reply.arguments}}]}
    else:
        produced = reply.content
        finish_reason = "stop"
        message = {"role": "assistant", "content": reply.content}
    prompt = prompt_tokens(body["messages"])
    completed = max(1, _tokens(len(produced)))
    return {
        "id": "chatcmpl-" + secrets.token_hex(12),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completed, "total_tokens": prompt + completed},
    }


def grounded_completion(body: dict[str, Any]) -> dict[str, Any]:
    """The simulated model's whole answer to a checked request body."""
    return completion(body, decide(body))
