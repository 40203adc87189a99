"""Customer satisfaction surveys' rules, as pure values: the five ratings the survey offers (best first, as the customer
reads the list), how a choice names its survey, and how long a rating and a comment are taken
(docs/team.md#satisfaction-surveys)."""

from __future__ import annotations

import re
from datetime import timedelta

DEFAULT_QUESTION = "How would you rate the help you got today?"
DEFAULT_THANKS = "Thank you for your rating! If you'd like to tell us more, just reply with a comment."
RATINGS = ((5, "Excellent", "★★★★★"), (4, "Good", "★★★★"), (3, "Okay", "★★★"), (2, "Poor", "★★"),
           (1, "Very poor", "★"))
LABELS = {rating: title for rating, title, _ in RATINGS}
# A rating is taken for this long after its survey was sent (a list the customer opens a week later still counts).
RATING_LIFETIME = timedelta(days=7)
# A customer's next text this soon after the comment was invited is their comment; after that it is a new message.
COMMENT_WINDOW = timedelta(minutes=30)
_CHOICE = re.compile(r"csat:(\d{1,18}):([1-5])")


def choice_id(survey_id: int, rating: int) -> str:
    """What a rating's row of the survey's list carries back when chosen."""
    return f"csat:{survey_id}:{rating}"


def chosen(reply_id: str | None) -> tuple[int, int] | None:
    """(survey id, rating) of a customer's choice in a survey; None for any other reply."""
    found = _CHOICE.fullmatch(reply_id or "")
    return (int(found[1]), int(found[2])) if found else None
