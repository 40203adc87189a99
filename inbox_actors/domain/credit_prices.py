"""What a template send costs in credits, by the template's category (the platform prices conversations that way).

Configured with `INBOX_TEMPLATE_CREDITS` ("marketing=8,utility=2,authentication=2"); a category not named costs
nothing, and with no prices at all sends are not metered. A template the workspace has not registered (its
category unknown) is held at the highest price: the platform refuses unknown templates, and a refused send is
refunded. Text and media sends cost nothing (they are answers inside the customer's 24-hour window). No I/O.
"""

from __future__ import annotations

import msgspec

CATEGORIES = ("MARKETING", "UTILITY", "AUTHENTICATION")
MAX_PRICE = 1_000_000


class TemplatePrices(msgspec.Struct, frozen=True):
    marketing: int = 0
    utility: int = 0
    authentication: int = 0

    @property
    def metered(self) -> bool:
        return self.price_of_unknown() > 0

    def price_of(self, category: str | None) -> int:
        """The price of a template of `category` (as stored: MARKETING, UTILITY, AUTHENTICATION); None: unknown."""
        if category is None or category.lower() not in self.__struct_fields__:
            return self.price_of_unknown()
        return getattr(self, category.lower())

    def price_of_unknown(self) -> int:
        return max(self.marketing, self.utility, self.authentication)


def parse_prices(text: str) -> TemplatePrices:
    """Prices from "category=credits,..." (case-insensitive categories); ValueError with a clear sentence."""
    prices: dict[str, int] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name.upper() not in CATEGORIES:
            raise ValueError(f"{part!r} is not category=credits (categories: {', '.join(CATEGORIES).lower()})")
        if name in prices:
            raise ValueError(f"{name} is priced twice")
        if not value.strip().isdigit() or not 0 <= int(value) <= MAX_PRICE:
            raise ValueError(f"the price of {name} must be a whole number from 0 to {MAX_PRICE:,}")
        prices[name] = int(value)
    return TemplatePrices(**prices)
