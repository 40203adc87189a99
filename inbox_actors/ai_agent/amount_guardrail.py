"""The amount guardrail: a reply may state a price only as the quote_price tool returned it.

An amount is a number written next to a currency (a symbol such as € or $, a three-letter code such as EUR, or a
currency's name such as "euros"), or a percentage (a discount is an amount too). Every amount in a reply must equal a
price a quote_price call of the same turn returned (compared as numbers: "19", "19.00" and "19,00" are one amount);
otherwise the reply is not sent and the chat is handed over (`bot_unquoted_amount`). Numbers that are no amount
("within 30 days", "open 9 to 5") pass. So amounts belong in pricing sheets, not in articles: an article's "free
shipping over 50 EUR" repeated by the model is stopped as well (docs/ai-agent.md#the-amount-guardrail).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

_SYMBOLS = "$€£¥₹₩₽₺₪฿₫₴₦"
_NAMES = (r"dollars?|euros?|pounds?|yen|rupees?|francs?|pesos?|reais|real|kronor|krona|kroner|krone|zloty|"
          r"rand|lira|yuan|won|usd|eur|gbp")
# Digits with "." or "," marks, or grouped by spaces in threes ("1 299,50").
_NUMBER = r"(?:\d{1,3}(?:[\u202f\u00a0 ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)*)"
_CODE = r"\b[A-Z]{3}\b"
_AMOUNT = re.compile(
    rf"(?:[{_SYMBOLS}]\s?(?P<a>{_NUMBER}))"                         # € 19.00, $5
    rf"|(?:(?P<b>{_NUMBER})\s?[{_SYMBOLS}])"                         # 19,00 €
    rf"|(?:{_CODE}\s?(?P<c>{_NUMBER}))"                              # EUR 19.00
    rf"|(?:(?P<d>{_NUMBER})\s?(?:{_CODE}|(?i:{_NAMES})\b))"          # 19.00 EUR, 19 euros
    rf"|(?:(?P<e>{_NUMBER})\s?(?:%|(?i:per\s?cent|percent)\b))"      # 90%, 90 percent
)


def amount(text: str) -> Decimal | None:
    """The number a written amount means: the last of "." and "," is the decimal mark when both appear; a lone ","
    is one when two digits or fewer follow it; spaces group thousands."""
    digits = re.sub(r"[\u202f\u00a0 ]", "", text)
    if "." in digits and "," in digits:
        mark = "." if digits.rfind(".") > digits.rfind(",") else ","
        grouping = "," if mark == "." else "."
        digits = digits.replace(grouping, "").replace(mark, ".")
    elif "," in digits:
        whole, _, fraction = digits.rpartition(",")
        digits = f"{whole.replace(',', '')}.{fraction}" if len(fraction) <= 2 else digits.replace(",", "")
    elif digits.count(".") > 1:
        digits = digits.replace(".", "")
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def stated_amounts(reply: str) -> list[str]:
    """The amounts the reply states, as written."""
    return [next(group for group in match.groups() if group) for match in _AMOUNT.finditer(reply)]


def unquoted_amounts(reply: str, quoted_prices: Iterable[str]) -> list[str]:
    """The amounts in `reply` that no quoted price equals (empty: the reply may be sent)."""
    allowed = {value for value in (amount(price) for price in quoted_prices) if value is not None}
    return [written for written in stated_amounts(reply) if amount(written) not in allowed]
