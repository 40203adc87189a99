"""The spec's two error conventions, and the answers for requests no handler takes."""

from __future__ import annotations

import logging

from quart import Quart, current_app, request
from werkzeug.exceptions import HTTPException

from inbox_actors.domain.auth_ladder import ErrorStyle, Refusal
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.runtime import ActorError, AskTimeout, KindUnavailable, ServedElsewhere
from inbox_actors.runtime.outages import caused_by
from inbox_http import database_outage
from inbox_http.encoding import json_response
from persistence.database import DatabaseUnavailable
from persistence.statement_fence import LeaseLost

log = logging.getLogger("inbox_http.errors")

INTERNAL_ERROR_SENTENCE = "An internal error occurred. Please try again."


def refusal_response(refusal: Refusal, headers: dict[str, str] | None = None):
    return json_response(refusal.body(), refusal.status, headers)


def stable_error(status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: object):
    """`{error: snake_code, message: Sentence.}` (Reporting API, key management, webhook settings, key checks)."""
    return json_response({"error": code, "message": message, **extra}, status, headers)


def payload_too_large(limit: int | None):
    """413 `payload_too_large`. The connection closes after it: the rest of the body stays unread (body_limit.py),
    and a connection with part of a request unread cannot carry the next one."""
    message = f"The request body is larger than {limit:,} bytes." if limit else "The request body is too large."
    return stable_error(413, "payload_too_large", message, headers={"Connection": "close"})


def sentence_error(status: int, sentence: str):
    """`{error: Sentence.}` (the older endpoints: sign-in check, sending, contacts)."""
    return json_response({"error": sentence}, status)


class ApiError(Exception):
    """Raised by a handler to answer with a stable-code error."""

    def __init__(self, status: int, code: str, message: str, **extra: object) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


class SentenceError(Exception):
    """Raised by a handler of an older endpoint (sending, contacts) to answer `{error: Sentence.}`."""

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status, self.sentence = status, sentence


def _route_style() -> ErrorStyle:
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    policy = getattr(view, "route_policy", None)
    return policy.errors if policy is not None else ErrorStyle.STABLE


def install_error_handlers(app: Quart) -> None:
    @app.errorhandler(ApiError)
    async def api_error(err: ApiError):
        return stable_error(err.status, err.code, err.message, **err.extra)

    @app.errorhandler(SentenceError)
    async def sentence(err: SentenceError):
        return sentence_error(err.status, err.sentence)

    @app.errorhandler(InvalidParameter)
    async def invalid_parameter(err: InvalidParameter):
        if _route_style() is ErrorStyle.SENTENCE:
            return sentence_error(400, err.message)
        return stable_error(400, err.code, err.message)

    @app.errorhandler(ChatNotFound)
    async def chat_not_found(err: ChatNotFound):
        return stable_error(404, "not_found", "No such chat in this workspace.")

    @app.errorhandler(DatabaseUnavailable)
    async def database_unavailable(err: DatabaseUnavailable):
        return _database_out(err)

    @app.errorhandler(LeaseLost)
    async def lease_lost(err: LeaseLost):
        return _workspace_moved(err)

    @app.errorhandler(ActorError)
    async def actor_unavailable(err: ActorError):
        if database_outage.during_outage(err):
            return _database_out(err)   # the actor crashed of the outage, or could not start for it
        if isinstance(err, ServedElsewhere) or caused_by(err, (LeaseLost,)):
            return _workspace_moved(err)  # the workspace moved on while this node served the request
        # Expected under load or while a dependency is down: a 500 the client may retry, not a bug's traceback.
        log.warning("%s %s: %s", request.method, request.path, err)
        headers = {"Retry-After": "1"}
        if _route_style() is ErrorStyle.SENTENCE:
            return json_response({"error": INTERNAL_ERROR_SENTENCE}, 500, headers)
        if isinstance(err, KindUnavailable):
            message = "This part of the service is failing (a dependency is down); retry with backoff."
        elif isinstance(err, AskTimeout):
            message = ("The service did not answer in time; the change may still complete, so read before "
                       "retrying a write.")
        else:
            message = "The service cannot take this request right now; retry with backoff."
        return stable_error(500, "internal_error", message, headers=headers)

    @app.errorhandler(HTTPException)
    async def http_error(err: HTTPException):
        status = err.code or 500
        if status == 404:
            return stable_error(404, "not_found", f"No route {request.method} {request.path}.")
        if status == 405:
            allowed = ", ".join(sorted(err.valid_methods or [])) if hasattr(err, "valid_methods") else ""
            return stable_error(405, "method_not_allowed", f"{request.method} is not allowed here.",
                                headers={"Allow": allowed} if allowed else None)
        if status == 413:       # a body without Content-Length that passed its path's limit as it arrived
            return payload_too_large(request.max_content_length)
        return stable_error(status, f"http_{status}", err.description or err.name)

    @app.errorhandler(Exception)
    async def unexpected(err: Exception):
        if database_outage.during_outage(err):
            return _database_out(err)   # a group of them, from a nursery
        if caused_by(err, (LeaseLost,)):
            return _workspace_moved(err)
        log.exception("unhandled error on %s %s", request.method, request.path)
        if _route_style() is ErrorStyle.SENTENCE:
            return sentence_error(500, INTERNAL_ERROR_SENTENCE)
        return stable_error(500, "internal_error", "The service failed to answer; retry with backoff.")


def _workspace_moved(err: BaseException):
    """503 `node_unavailable` with Retry-After in the route's convention: this node lost the workspace's lease while
    it served the request (paused, or cut off, past the lease), so PostgreSQL refused the write and nothing of it was
    written; a send whose platform call was made is answered in doubt before it comes here (sending.py). Sent again,
    the request reaches the node that holds the workspace now."""
    log.warning("%s %s: 503, this node no longer holds the workspace (%s)", request.method, request.path, err)
    headers = {"Retry-After": "1"}
    if _route_style() is ErrorStyle.SENTENCE:
        return json_response({"error": database_outage.SENTENCE}, 503, headers)
    return stable_error(503, "node_unavailable", "This node no longer serves the workspace. Please try again: the "
                                                 "request goes to the node that does.", headers=headers)


def _database_out(err: BaseException):
    """503 with Retry-After in the route's convention: the request met the database out (database_outage.py)."""
    log.debug("%s %s: 503 while the database is out (%s)", request.method, request.path, err)
    headers = {"Retry-After": database_outage.RETRY_AFTER}
    if _route_style() is ErrorStyle.SENTENCE:
        return json_response({"error": database_outage.SENTENCE}, 503, headers)
    return stable_error(503, database_outage.CODE, database_outage.MESSAGE, headers=headers)
