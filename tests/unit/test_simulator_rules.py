"""The simulated platform's rules, without sockets: refusals, status plans, numbers, templates, bounded state."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from inbox_actors.platform.payloads import SendRequest, StatusUpdate
from inbox_actors.platform.simulator.rules import (
    PlannedStatus,
    StatusDelays,
    default_read_receipts,
    planned_statuses,
    refusal_for,
    wa_id,
    within_service_window,
)
from inbox_actors.platform.simulator.state import (
    Customers,
    LruMap,
    QueuedStatus,
    SentLog,
    SentRecord,
    StatusQueues,
    StatusSchedule,
    Throughput,
    Timeline,
)
from inbox_actors.platform.template_catalog import (
    InMemoryTemplateCatalog,
    InvalidTemplateSpec,
    TemplateSpec,
    parse_template_spec,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
WELCOME = TemplateSpec(name="welcome", language="en_US", parameter_count=2, category="UTILITY")
PROMO = TemplateSpec(name="promo", language="en_US", parameter_count=0, category="MARKETING")
CUSTOMER = "447700900123"


def text(to: str = CUSTOMER) -> SendRequest:
    return SendRequest(to=to, type="text", text="hello")


def template(name: str = "welcome", language: str = "en_US", parameters=("Ann", "42"),
             to: str = CUSTOMER) -> SendRequest:
    return SendRequest(to=to, type="template", template_name=name, template_language=language,
                       template_parameters=tuple(parameters))


def code_of(request: SendRequest, *, last_inbound=None, spec=None, name_known=False) -> int | None:
    refusal = refusal_for(request, wa_id(request.to), now=NOW, last_inbound=last_inbound, template=spec,
                          template_name_known=name_known)
    return None if refusal is None else refusal.error.code


# -- the 24-hour window -------------------------------------------------------------------------------------

def test_free_form_needs_the_customer_to_have_written_in_the_last_24_hours():
    assert code_of(text(), last_inbound=NOW - timedelta(hours=1)) is None
    assert code_of(text(), last_inbound=NOW - timedelta(hours=24)) is None
    assert code_of(text(), last_inbound=NOW - timedelta(hours=24, seconds=1)) == 131047
    assert code_of(text(), last_inbound=None) == 131047
    media = SendRequest(to=CUSTOMER, type="image", media_url="https://example.com/a.png")
    assert code_of(media, last_inbound=None) == 131047


def test_templates_go_out_without_a_window():
    assert code_of(template(), last_inbound=None, spec=WELCOME, name_known=True) is None


def test_window_edges():
    assert within_service_window(NOW, NOW)
    assert not within_service_window(None, NOW)
    assert not within_service_window(NOW - timedelta(days=2), NOW)


# -- templates ----------------------------------------------------------------------------------------------

def test_unknown_template_name_or_language_is_132001_and_the_details_say_which():
    unknown_name = refusal_for(template(name="nope"), CUSTOMER, now=NOW, last_inbound=NOW, template=None,
                               template_name_known=False)
    wrong_language = refusal_for(template(language="de"), CUSTOMER, now=NOW, last_inbound=NOW, template=None,
                                 template_name_known=True)
    assert unknown_name.error.code == wrong_language.error.code == 132001
    assert unknown_name.http_status == 400
    assert unknown_name.error.error_data.details == "template name (nope) does not exist"
    assert wrong_language.error.error_data.details == "template name (welcome) does not exist in de"
    assert unknown_name.error.message == "(#132001) Template name does not exist in the translation"


def test_parameter_count_must_match():
    refusal = refusal_for(template(parameters=("Ann",)), CUSTOMER, now=NOW, last_inbound=None, template=WELCOME,
                          template_name_known=True)
    assert refusal.error.code == 132000
    assert "(1)" in refusal.error.error_data.details and "(2)" in refusal.error.error_data.details
    assert code_of(template(parameters=("a", "b", "c")), spec=WELCOME, name_known=True) == 132000


# -- number rules -------------------------------------------------------------------------------------------

def test_numbers_starting_999_are_undeliverable_whatever_is_sent():
    assert code_of(text("999123456789"), last_inbound=NOW) == 131026
    assert code_of(template(to="999123456789"), spec=WELCOME, name_known=True) == 131026


def test_marketing_templates_to_997_numbers_are_declined():
    promo = template(name="promo", parameters=(), to="997123456789")
    assert code_of(promo, spec=PROMO, name_known=True) == 131049
    assert code_of(template(to="997123456789"), spec=WELCOME, name_known=True) is None   # utility: fine
    assert code_of(template(name="promo", parameters=()), spec=PROMO, name_known=True) is None


def test_wa_id_accepts_the_spellings_the_platform_accepts():
    assert wa_id("+44 7700 900-123") == "447700900123"
    assert wa_id("(44) 7700.900123") == "447700900123"
    assert wa_id("44770090012x") is None
    assert wa_id("123") is None
    assert wa_id("") is None


# -- statuses -----------------------------------------------------------------------------------------------

DELAYS = StatusDelays(sent=1.0, delivered=2.0, read=3.0)


def test_statuses_sent_delivered_read_at_the_configured_delays():
    assert planned_statuses(CUSTOMER, read_receipts=True, delays=DELAYS) == (
        PlannedStatus(after=1.0, status="sent"), PlannedStatus(after=2.0, status="delivered"),
        PlannedStatus(after=3.0, status="read"))


def test_no_read_status_without_read_receipts():
    assert [p.status for p in planned_statuses(CUSTOMER, read_receipts=False, delays=DELAYS)] == ["sent", "delivered"]


def test_998_numbers_are_sent_then_fail_undeliverable():
    sent, failed = planned_statuses("998123456789", read_receipts=True, delays=DELAYS)
    assert sent.status == "sent"
    assert (failed.status, failed.error_code, failed.error_title, failed.after) == (
        "failed", 131026, "Message undeliverable", 2.0)


def test_read_receipts_default_off_only_for_numbers_ending_in_0():
    assert default_read_receipts("447700900123")
    assert not default_read_receipts("447700900120")


# -- the template catalog -----------------------------------------------------------------------------------

async def test_in_memory_catalog_per_number_and_for_every_number():
    catalog = InMemoryTemplateCatalog([WELCOME])
    catalog.add(PROMO, phone_number_id="111")
    assert await catalog.find("anything", "welcome", "en_US") == WELCOME
    assert await catalog.find("anything", "welcome", "de") is None
    assert await catalog.has_name("anything", "welcome")
    assert await catalog.find("111", "promo", "en_US") == PROMO
    assert await catalog.find("222", "promo", "en_US") is None
    assert not await catalog.has_name("222", "promo")


def test_template_specs_from_the_command_line():
    assert parse_template_spec("welcome:en_US:2") == TemplateSpec("welcome", "en_US", 2, "UTILITY")
    assert parse_template_spec("promo:pt_BR:0:marketing") == TemplateSpec("promo", "pt_BR", 0, "MARKETING")
    for bad in ("welcome", "welcome:en_US", "welcome:en_US:two", "w:en:-1", "w:en:1:SPAM", ":en:1", "w:en:1:X:Y"):
        with pytest.raises(InvalidTemplateSpec):
            parse_template_spec(bad)


# -- bounded state ------------------------------------------------------------------------------------------

def test_lru_map_forgets_the_least_recently_used():
    lru: LruMap[str, bool] = LruMap(2)
    lru.put("a", False)
    lru.put("b", True)
    assert lru.get("a") is False          # a is now the most recent
    lru.put("c", True)
    assert lru.get("b") is None and lru.get("a") is False and len(lru) == 2


def test_customers_window_is_per_business_number():
    customers = Customers(capacity=10)
    customers.wrote("111", CUSTOMER, NOW)
    assert customers.last_inbound("111", CUSTOMER) == NOW
    assert customers.last_inbound("222", CUSTOMER) is None


def test_throughput_is_a_sliding_second_per_number():
    throughput = Throughput(per_second=3, capacity=10)
    assert [throughput.admit("111", 10.0 + i * 0.1) for i in range(4)] == [True, True, True, False]
    assert throughput.admit("222", 10.35)         # another number has its own window
    assert not throughput.admit("111", 10.9)      # still three in (9.9, 10.9]
    assert throughput.admit("111", 11.05)         # the first has left the window


def test_sent_log_keeps_the_newest_per_number_and_filters_by_recipient():
    log = SentLog(per_number=3, numbers=2)
    for i in range(5):
        log.add(SentRecord.of(f"wamid.{i}", "111", CUSTOMER if i % 2 else "447700900999", text(), NOW))
    assert [r.message_id for r in log.sent("111")] == ["wamid.2", "wamid.3", "wamid.4"]
    assert [r.message_id for r in log.sent("111", CUSTOMER)] == ["wamid.3"]
    log.add(SentRecord.of("wamid.x", "222", CUSTOMER, text(), NOW))
    log.add(SentRecord.of("wamid.y", "333", CUSTOMER, text(), NOW))
    assert log.sent("111") == []                  # the least recently used number was forgotten


# -- statuses on their way ----------------------------------------------------------------------------------

def timeline(message_id: str, accepted: float, *, read_receipts: bool = True) -> Timeline:
    record = SentRecord.of(message_id, "111", CUSTOMER, text(), NOW)
    plan = planned_statuses(CUSTOMER, read_receipts=read_receipts, delays=StatusDelays(0.05, 0.2, 0.5))
    return Timeline(record=record, plan=plan, accepted=accepted)


def test_the_schedule_answers_the_earliest_due_first_and_nothing_early():
    schedule = StatusSchedule()
    assert schedule.next_due() == float("inf") and schedule.pop_due(1e9) is None
    late, early, tie = timeline("late", 10.0), timeline("early", 9.0), timeline("tie", 10.0)
    assert [schedule.push(t) for t in (late, early, tie)] == [10.05, 9.05, 10.05]
    assert schedule.next_due() == 9.05 and len(schedule) == 3
    assert schedule.pop_due(9.0) is None
    assert schedule.pop_due(10.05) is early
    assert [schedule.pop_due(10.05), schedule.pop_due(10.05)] == [late, tie]     # ties in order of arrival
    assert schedule.pop_due(10.05) is None and len(schedule) == 0


def test_a_timeline_advances_through_its_plan_and_is_over_once_all_settled():
    quiet = timeline("m", 0.0, read_receipts=False)
    assert quiet.advance().status == "sent" and quiet.next_due() == 0.2
    quiet.unsettled = 1
    assert quiet.advance().status == "delivered" and not quiet.over     # `sent` not yet posted or dropped
    quiet.unsettled = 0
    assert quiet.over


def queued(message_id: str, status: str = "sent") -> QueuedStatus:
    return QueuedStatus(update=StatusUpdate(message_id=message_id, recipient_phone=CUSTOMER, status=status, at=NOW),
                        timeline=timeline(message_id, 0.0))


def test_status_queues_are_per_number_bounded_and_oldest_first():
    queues = StatusQueues(per_number=3)
    assert all(queues.put("111", queued(f"m{i}")) for i in range(3))
    assert not queues.put("111", queued("m3"))                       # full: refused, nothing queued
    assert queues.put("222", queued("x"))                            # another number has its own room
    assert len(queues) == 4 and queues.waiting("111") == 3
    assert [q.update.message_id for q in queues.take("111", 2)] == ["m0", "m1"]
    assert [q.update.message_id for q in queues.take("111", 2)] == ["m2"]
    assert queues.take("111", 2) == [] and queues.waiting("111") == 0 and len(queues) == 1


def test_taking_passes_over_messages_held_elsewhere_and_keeps_their_order():
    queues = StatusQueues(per_number=10)
    for message_id, status in [("a", "delivered"), ("b", "sent"), ("a", "read"), ("c", "sent"), ("b", "delivered")]:
        queues.put("111", queued(message_id, status))
    taken = queues.take("111", 10, held={"a"})
    assert [(q.update.message_id, q.update.status) for q in taken] == [("b", "sent"), ("c", "sent"),
                                                                      ("b", "delivered")]
    assert [(q.update.message_id, q.update.status) for q in queues.take("111", 1)] == [("a", "delivered")]
    assert [(q.update.message_id, q.update.status) for q in queues.take("111", 1)] == [("a", "read")]
    assert len(queues) == 0
