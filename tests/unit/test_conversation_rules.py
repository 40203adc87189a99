"""The pure rules of a chat: state transitions, delivery status order, phone spellings, the send body."""

from __future__ import annotations

import pytest

from inbox_actors.domain import conversation_states as states
from inbox_actors.domain.conversation_states import IllegalTransition, State
from inbox_actors.domain.delivery_status import advances, reached_phone
from inbox_actors.domain.phones import InvalidPhone, normalise_phone
from inbox_http.errors import SentenceError
from inbox_http.send_body import read_send_body


def test_claim_from_the_bot_or_the_queue_and_not_from_another_member():
    assert states.claim(State.AI_ONLY, None, 7) == states.Assignment(State.HUMAN_ACTIVE, 7, "claimed")
    assert states.claim(State.HANDOFF_PENDING, None, 7).event == "claimed"
    assert states.claim(State.HUMAN_ACTIVE, 7, 7).event is None
    with pytest.raises(IllegalTransition):
        states.claim(State.HUMAN_ACTIVE, 8, 7)


def test_release_and_transfer_need_a_claimed_chat():
    assert states.release(State.HUMAN_ACTIVE, 7) == states.Assignment(State.HANDOFF_PENDING, None, "released")
    assert states.transfer(State.HUMAN_ACTIVE, 7, 8) == states.Assignment(State.HUMAN_ACTIVE, 8, "transferred")
    for state in (State.AI_ONLY, State.HANDOFF_PENDING):
        with pytest.raises(IllegalTransition):
            states.release(state, None)
        with pytest.raises(IllegalTransition):
            states.transfer(state, None, 8)
    with pytest.raises(IllegalTransition):
        states.transfer(State.HUMAN_ACTIVE, 8, 8)


def test_resolve_returns_to_the_bot_and_hand_off_leaves_it():
    assert states.resolve(State.HUMAN_ACTIVE).state is State.AI_ONLY
    assert states.resolve(State.HANDOFF_PENDING).event == "resolved"
    with pytest.raises(IllegalTransition):
        states.resolve(State.AI_ONLY)
    assert states.hand_off(State.AI_ONLY) is State.HANDOFF_PENDING
    with pytest.raises(IllegalTransition):
        states.hand_off(State.HUMAN_ACTIVE)
    assert states.bot_may_answer(State.AI_ONLY)
    assert not states.bot_may_answer(State.HANDOFF_PENDING) and not states.bot_may_answer(State.HUMAN_ACTIVE)


@pytest.mark.parametrize("current, reported, moves", [
    ("sent", "delivered", True), ("sent", "read", True), ("delivered", "read", True),
    ("read", "delivered", False), ("read", "sent", False), ("delivered", "sent", False),
    ("sent", "failed", True), ("delivered", "failed", False), ("read", "failed", False),
    ("failed", "delivered", False), ("sent", "sent", False), ("read", "read", False),
])
def test_statuses_only_move_forwards(current, reported, moves):
    assert advances(current, reported) is moves


def test_only_delivered_or_read_count_as_reaching_the_phone():
    assert reached_phone("delivered") and reached_phone("read")
    assert not reached_phone("sent") and not reached_phone("failed")


@pytest.mark.parametrize("raw, phone", [
    ("+91 98765 43210", "919876543210"), ("9876543210", "919876543210"), ("919876543210", "919876543210"),
    (" +44 7700 900123 ", "447700900123"),
])
def test_phone_spellings(raw, phone):
    assert normalise_phone(raw) == phone


@pytest.mark.parametrize("raw", ["", "+", "98-76", "(44) 7700", "１２３４５６７８９", "1234567", "1" * 16])
def test_phones_refused(raw):
    with pytest.raises(InvalidPhone):
        normalise_phone(raw)


def test_the_send_body_reads_text_media_and_templates():
    to, text = read_send_body(b'{"to": "9876543210", "message": " hi "}')
    assert to == "919876543210" and text.type == "text" and text.text == "hi"
    _, media = read_send_body(b'{"to": "919876543210", "type": "document", "media_url": "https://x.io/a.pdf",'
                              b' "filename": "a.pdf", "message": "the invoice"}')
    assert (media.type, media.media_url, media.filename, media.text) == ("document", "https://x.io/a.pdf", "a.pdf",
                                                                         "the invoice")
    _, template = read_send_body(b'{"to": "919876543210", "type": "template",'
                                 b' "template": {"name": "t", "language": "en_US", "parameters": ["a", 2]}}')
    assert template.template_parameters == ("a", "2") and template.template_language == "en_US"


@pytest.mark.parametrize("raw", [b"[1]", b"not json", b'{"to": 5, "message": "x"}',
                                 b'{"to": "919876543210", "message": "' + b"x" * 5000 + b'"}',
                                 b'{"to": "919876543210", "type": "template", "template": {"name": "t", '
                                 b'"parameters": "a"}}'])
def test_bad_send_bodies_are_sentences(raw):
    with pytest.raises(SentenceError) as refused:
        read_send_body(raw)
    assert refused.value.status == 400
