"""Recording every call made with a key, with the status it was answered (refusals and 429s included)."""

from __future__ import annotations

import logging

from quart import Quart, Response, g, request

from inbox_actors.access.activity_log import CallRecord, record_call
from inbox_actors.runtime import ActorError
from inbox_http.dependencies import dependencies
from inbox_http.guard import client_ip

log = logging.getLogger("inbox_http.audit")


def install_audit(app: Quart) -> None:
    @app.after_request
    async def record(response: Response) -> Response:
        credential = g.get("audit_credential")
        key_hash = g.get("audit_key_hash")
        if credential is None and key_hash is None:
            return response
        state = dependencies()
        entry = CallRecord(key_id=credential.key_id if credential else None,
                           workspace_id=credential.workspace_id if credential else None, key_hash=key_hash,
                           method=request.method, path=request.path[:2000], status=response.status_code,
                           ip=client_ip(), at=state.clock.now())
        # The answer stands either way: a failing activity log is the operator's alarm, not the client's.
        try:
            recorded = await record_call(state.actors, entry)
        except ActorError as err:
            recorded = False
            log.error("activity log refused a record: %s", err)
        if not recorded:
            state.metrics.activity_record_dropped()
            log.error("dropped the activity record of %s %s for key %s (%d dropped since start)",
                      entry.method, entry.path, entry.key_id if entry.key_id is not None else "by hash",
                      state.metrics.activity_records_dropped())
        return response
