"""Topping up the workspace's credits: one transaction on the ledger (`credits/ledger.py`), where a reference used
before credits nothing and answers the first top-up again (`replayed`)."""

from __future__ import annotations

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused
from inbox_actors.credits import ledger


async def top_up(deps: ActionDeps, caller: Caller, body: ledger.TopUp) -> ledger.ToppedUp | Refused:
    try:
        return await ledger.top_up(deps.db, caller.workspace_id, caller.member_id, body, deps.clock.now())
    except ledger.ReferenceUsed as err:
        return Refused(Reason.REFUSED, str(err), 409, "reference_used")
