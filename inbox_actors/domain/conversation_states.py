"""The conversation state machine: AI_ONLY, HANDOFF_PENDING, HUMAN_ACTIVE.

The spec names the states and the assignment events but leaves the transitions open; these are ours, and
docs/conversations.md carries the same table. Pure functions: each takes the chat's state and assignee and
returns what the transition leads to, or raises IllegalTransition (answered 409 invalid_transition; nothing
changes).

| state                      | event                                   | next            |
|----------------------------|-----------------------------------------|-----------------|
| (new chat)                 | customer writes                         | AI_ONLY         |
| AI_ONLY                    | customer asks for a person / no answer  | HANDOFF_PENDING |
| AI_ONLY, HANDOFF_PENDING   | claim (or an agent replies)             | HUMAN_ACTIVE    |
| HUMAN_ACTIVE               | claim by the assignee                   | HUMAN_ACTIVE (no change, no event) |
| HUMAN_ACTIVE               | release                                 | HANDOFF_PENDING |
| HUMAN_ACTIVE               | transfer to another active member       | HUMAN_ACTIVE    |
| HANDOFF_PENDING, HUMAN_ACTIVE | resolve                              | AI_ONLY         |
"""

from __future__ import annotations

import enum

import msgspec


class State(str, enum.Enum):
    AI_ONLY = "AI_ONLY"
    HANDOFF_PENDING = "HANDOFF_PENDING"
    HUMAN_ACTIVE = "HUMAN_ACTIVE"


# handover_reason values the service itself records.
CUSTOMER_ASKED_FOR_PERSON = "customer_asked_for_person"
BOT_HAS_NO_ANSWER = "bot_has_no_answer"
CLAIMED_FROM_BOT = "claimed_from_bot"
# The bot's answer could not be sent (the platform kept refusing it, e.g. for throughput): a person takes over.
BOT_REPLY_NOT_DELIVERED = "bot_reply_not_delivered"
# The workspace switched its bot off: every customer message goes to a person.
BOT_OFF = "bot_off"
# The AI agent's own (docs/ai-agent.md): the model failed, timed out or answered unusably; the model chose to hand
# over; the reply stated an amount no quote_price call returned; the workspace's credits ran out; its monthly
# model budget is spent; the bot has replied max_bot_turns times in a row without a person.
BOT_UNAVAILABLE = "bot_unavailable"
BOT_HANDED_OFF = "bot_handed_off"
BOT_UNQUOTED_AMOUNT = "bot_unquoted_amount"
BOT_OUT_OF_CREDITS = "bot_out_of_credits"
BOT_BUDGET_REACHED = "bot_budget_reached"
BOT_TURNS_EXHAUSTED = "bot_turns_exhausted"


class IllegalTransition(Exception):
    """The event is not allowed in the chat's current state; `state` is that state."""

    def __init__(self, state: State, message: str) -> None:
        super().__init__(message)
        self.state = state


class Assignment(msgspec.Struct, frozen=True):
    """Where a transition leaves the chat. `event` is the assignment event to record (None: nothing to
    record, the chat is already where the caller wanted it)."""

    state: State
    assignee: int | None
    event: str | None


def hand_off(state: State) -> State:
    if state is not State.AI_ONLY:
        raise IllegalTransition(state, f"The chat is already with the team ({state.value}).")
    return State.HANDOFF_PENDING


def claim(state: State, assignee: int | None, member: int) -> Assignment:
    if state is State.HUMAN_ACTIVE:
        if assignee == member:
            return Assignment(State.HUMAN_ACTIVE, member, None)
        raise IllegalTransition(state, "Another member has claimed this chat; it can be transferred or released.")
    return Assignment(State.HUMAN_ACTIVE, member, "claimed")


def release(state: State, assignee: int | None) -> Assignment:
    if state is not State.HUMAN_ACTIVE:
        raise IllegalTransition(state, f"Only a claimed chat can be released; this one is {state.value}.")
    return Assignment(State.HANDOFF_PENDING, None, "released")


def transfer(state: State, assignee: int | None, to_member: int) -> Assignment:
    if state is not State.HUMAN_ACTIVE:
        raise IllegalTransition(state, f"Only a claimed chat can be transferred; this one is {state.value}. "
                                       "Claim it instead.")
    if assignee == to_member:
        raise IllegalTransition(state, "The chat is already assigned to that member.")
    return Assignment(State.HUMAN_ACTIVE, to_member, "transferred")


def resolve(state: State) -> Assignment:
    if state is State.AI_ONLY:
        raise IllegalTransition(state, "The chat is with the bot; there is nothing to resolve.")
    return Assignment(State.AI_ONLY, None, "resolved")


def bot_may_answer(state: State) -> bool:
    """The bot speaks only while no person is involved."""
    return state is State.AI_ONLY
