"""The credits use cases at their own level: the balance and ledger reads need billing_view, a top-up
billing_manage; a top-up's rules (its amount, a reference used for another amount) and the ledger's parameters
answer their own codes. The route's tests (e2e/test_credits.py) check how they answer."""

from __future__ import annotations

from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.use_cases import credits
from inbox_actors.use_cases.outcomes import Done, Reason, Refused

PRICES = TemplatePrices(marketing=5, utility=1)


async def test_reads_need_billing_view_and_a_top_up_billing_manage(use_cases):
    viewer = await use_cases.member(permissions=["billing_view"])
    nobody = await use_cases.member(permissions=["contacts"])
    refused = await use_cases.run(nobody, credits.BALANCE, {"prices": PRICES})
    assert isinstance(refused, Refused) and (refused.status, refused.code) == (403, "permission_denied")
    assert "read_credit_balance needs the billing_view permission" in refused.message
    top_up = await use_cases.run(viewer, credits.TOP_UP, {"amount": 5})
    assert isinstance(top_up, Refused) and top_up.reason is Reason.PERMISSION
    assert credits.LEDGER.allows(viewer) and not credits.TOP_UP.allows(viewer) and not credits.LEDGER.allows(nobody)
    assert await use_cases.db.fetchval("SELECT count(*) FROM credit_ledger") == 0


async def test_a_top_up_s_rules_and_the_ledger_s_parameters_answer_their_codes(use_cases):
    manager = await use_cases.member(permissions=["billing_manage", "billing_view"])
    for amount in (0, 10_000_001, "5"):
        outcome = await use_cases.run(manager, credits.TOP_UP, {"amount": amount})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, "invalid_arguments"), amount
    first = await use_cases.run(manager, credits.TOP_UP, {"amount": 12, "reference": "pay-1"})
    assert isinstance(first, Done)
    reused = await use_cases.run(manager, credits.TOP_UP, {"amount": 99, "reference": "pay-1"})
    assert isinstance(reused, Refused) and (reused.status, reused.code) == (409, "reference_used")
    for args, code in (({"limit": "0"}, "invalid_limit"), ({"cursor": "nope"}, "invalid_cursor"),
                       ({"since": "yesterday"}, "invalid_since")):
        outcome = await use_cases.run(manager, credits.LEDGER, {"args": args})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, code), args
    wrong = await use_cases.run(manager, credits.BALANCE, {"prices": {"marketing": "five"}})
    assert isinstance(wrong, Refused) and wrong.code == "invalid_arguments"


async def test_a_top_up_is_answered_once_per_reference_and_read_back(use_cases):
    manager = await use_cases.member(permissions=["billing_manage", "billing_view"])
    first = await use_cases.run(manager, credits.TOP_UP, {"amount": 12, "reference": "pay-1", "note": " first "})
    again = await use_cases.run(manager, credits.TOP_UP, {"amount": 12, "reference": "pay-1"})
    assert isinstance(first, Done) and (first.data.balance, first.data.replayed) == (12, False)
    assert first.data.entry.member.user_id == manager.member_id and first.data.entry.note == "first"
    assert isinstance(again, Done) and (again.data.balance, again.data.replayed) == (12, True)

    balance = await use_cases.run(manager, credits.BALANCE, {"prices": PRICES})
    assert isinstance(balance, Done) and (balance.data.balance, balance.data.metered) == (12, True)
    assert (balance.data.template_prices.marketing, balance.data.template_prices.utility) == (5, 1)
    ledger = await use_cases.run(manager, credits.LEDGER, {"args": {"limit": "1"}})
    assert isinstance(ledger, Done) and [(e.reason, e.delta) for e in ledger.data.data] == [("top_up", 12)]
    assert ledger.data.next_cursor is None
