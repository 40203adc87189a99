"""The workspace's credits as use cases: the balance with the prices, the ledger, a top-up.

A top-up is one transaction on the ledger (`credits/ledger.py`), where a reference used before credits nothing and
answers the first top-up again (`replayed`). Reading needs `billing_view`, topping up `billing_manage` (neither
has a read variant).
"""

from __future__ import annotations

import msgspec

from inbox_actors.credits import ledger
from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, done


class ReadBalance(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    prices: TemplatePrices
    """The service's configured template prices, which the door holds (they are the service's settings, not the
    workspace's data): the balance answers them beside itself."""


class ReadLedger(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    args: dict[str, str] = {}
    """The query parameters as given (`since`, `to`, `limit`, `cursor`): the ledger judges them as every
    windowed, keyset-paged read does, each broken one refused with its own code."""


async def top_up(deps: UseCaseDeps, caller: Caller, body: ledger.TopUp) -> ledger.ToppedUp | Refused:
    try:
        return await ledger.top_up(deps.db, caller.workspace_id, caller.member_id, body, deps.clock.now())
    except ledger.ReferenceUsed as err:
        return Refused(Reason.REFUSED, str(err), 409, "reference_used")


async def _balance(deps: UseCaseDeps, caller: Caller, a: ReadBalance) -> Outcome:
    return Done(await ledger.read_balance(deps.db, caller.workspace_id, a.prices))


async def _ledger(deps: UseCaseDeps, caller: Caller, a: ReadLedger) -> Outcome:
    return Done(await ledger.ledger(deps.db, caller.workspace_id, a.args, deps.clock.now()))


async def _top_up(deps: UseCaseDeps, caller: Caller, a: ledger.TopUp) -> Outcome:
    return done(await top_up(deps, caller, a))


# -- the declarations ----------------------------------------------------------------------------------------

BALANCE = UseCase("read_credit_balance", ReadBalance, permissions.BILLING_VIEW, Kind.READ, _balance)
LEDGER = UseCase("read_credit_ledger", ReadLedger, permissions.BILLING_VIEW, Kind.READ, _ledger)
TOP_UP = UseCase("top_up_credits", ledger.TopUp, permissions.BILLING_MANAGE, Kind.WRITE, _top_up)
