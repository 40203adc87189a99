"""Credits, `/api/credits/*`: the balance and prices, the ledger, top-ups.

Full API (Scale), stable-code errors. Each binds a credits use case (`use_cases/credits.py`: reads need
`billing_view`, a top-up `billing_manage`, neither with a read variant), which a member's dashboard session may
call too, holding the same. Rules live in `inbox_actors.credits.ledger`; sends are charged on the send path.
"""

from __future__ import annotations

import msgspec
from quart import Blueprint, request

from inbox_actors.credits import ledger
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.use_cases import credits
from inbox_actors.use_cases.outcomes import Done
from inbox_actors.use_cases.use_case import run
from inbox_http.contract import answers, takes
from inbox_http.dependencies import dependencies
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer, run_route

blueprint = Blueprint("credits", __name__, url_prefix="/api/credits")


@blueprint.get("")
@responds(ledger.CreditBalance)
@guarded(tier=ApiTier.FULL, use_case=credits.BALANCE, dashboard=True)
async def read_balance():
    """The balance, what a template send costs by category, and the alert levels that emit credits_threshold."""
    return await run_route(credits.BALANCE, prices=dependencies().settings.template_prices)


@blueprint.get("/ledger")
@responds(ledger.Ledger)
@guarded(tier=ApiTier.FULL, use_case=credits.LEDGER, dashboard=True)
@accepts(catalog.LEDGER)
async def read_ledger():
    """Every change of the balance, newest first: template sends, refunds, top-ups (window default 90 days)."""
    return await run_route(credits.LEDGER, args=request.args.to_dict())


@blueprint.post("/top-up")
@responds(ledger.ToppedUp, 201)
@guarded(tier=ApiTier.FULL, use_case=credits.TOP_UP, dashboard=True)
@takes(ledger.TopUp)
@answers(200, 409)
async def top_up():
    """Add credits (1 to 10,000,000): 201. A `reference` used before credits nothing and answers the first top-up
    again: 200."""
    body = await read_json_body(ledger.TopUp)
    topped = await run(dependencies().use_case_deps, current_caller(), credits.TOP_UP, msgspec.structs.asdict(body))
    return answer(topped, 200 if isinstance(topped, Done) and topped.data.replayed else 201)
