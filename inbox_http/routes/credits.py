"""Credits, `/api/credits/*`: the balance and prices, the ledger, top-ups.

Full API (Scale). Reads need `billing_view`, a top-up `billing_manage` (neither has a read variant); a member's
dashboard session may call them with the same permissions. Stable-code errors. Rules live in
`inbox_actors.credits.ledger`; sends are charged on the send path.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import credits, permissions
from inbox_actors.credits import ledger
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.services import services

blueprint = Blueprint("credits", __name__, url_prefix="/api/credits")


@blueprint.get("")
@responds(ledger.CreditBalance)
@guarded(tier=ApiTier.FULL, scopes=permissions.BILLING_VIEW, dashboard=True)
async def read_balance():
    """The balance, what a template send costs by category, and the alert levels that emit credits_threshold."""
    state = services()
    return json_response(await ledger.read_balance(state.db, current_caller().workspace_id,
                                                    state.settings.template_prices))


@blueprint.get("/ledger")
@responds(ledger.Ledger)
@guarded(tier=ApiTier.FULL, scopes=permissions.BILLING_VIEW, dashboard=True)
@accepts(catalog.LEDGER)
async def read_ledger():
    """Every change of the balance, newest first: template sends, refunds, top-ups (window default 90 days)."""
    state = services()
    return json_response(await ledger.ledger(state.db, current_caller().workspace_id, request.args,
                                              state.clock.now()))


@blueprint.post("/top-up")
@responds(ledger.ToppedUp, 201)
@guarded(tier=ApiTier.FULL, scopes=permissions.BILLING_MANAGE, dashboard=True)
@takes(ledger.TopUp)
@answers(409)
async def top_up():
    """Add credits (1 to 10,000,000); a `reference` used before credits nothing and answers the first top-up."""
    body = await read_json_body(ledger.TopUp)
    topped = await credits.top_up(services().action_deps, current_caller(), body)
    return answer(topped, 200 if isinstance(topped, ledger.ToppedUp) and topped.replayed else 201)
