"""The base of the refusals an operator's command reports, so that no area imports another's error for it."""

from __future__ import annotations


class OperatorError(ValueError):
    """A refusal an operator's command reports as one line and an exit status: the message is the line.

    The `inbox-actors` command line catches this base alone, prints `inbox-actors: error: <message>` on
    stderr and exits with status 2 (bad arguments). Each area subclasses it with an error named by the
    cause (AccountError, InviteError, SessionError, TemplateError, BotAnswerError), raised before anything
    is written. A ValueError, for callers that catch that.
    """
