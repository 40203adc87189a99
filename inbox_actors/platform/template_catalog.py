"""The templates the simulated platform knows, behind a seam: in memory here, database-backed in the service.

The simulator asks only two questions, both per business number (a template belongs to the WhatsApp Business
Account behind the number): is there a template of this name in this language, and is there one of this name
in any language (Meta answers 132001 either way; the details say which was wrong).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import msgspec

CATEGORIES = ("MARKETING", "UTILITY", "AUTHENTICATION")
# Templates added for no particular number apply to every number (the standalone simulator's --template).
ANY_NUMBER = "*"


class TemplateSpec(msgspec.Struct, frozen=True):
    name: str
    language: str                            # locale code, e.g. en_US
    parameter_count: int                     # body parameters ({{1}}, {{2}}, ...)
    category: str = "UTILITY"                # one of CATEGORIES; MARKETING ones may be declined (131049)


class TemplateCatalog(Protocol):
    async def find(self, phone_number_id: str, name: str, language: str) -> TemplateSpec | None: ...

    async def has_name(self, phone_number_id: str, name: str) -> bool: ...


class InvalidTemplateSpec(ValueError):
    """A `NAME:LANG:PARAMS[:CATEGORY]` text that does not describe a template."""


class InMemoryTemplateCatalog:
    """Templates held in a dict; for the standalone simulator and tests."""

    def __init__(self, templates: Iterable[TemplateSpec] = (), *, phone_number_id: str = ANY_NUMBER) -> None:
        self._templates: dict[tuple[str, str, str], TemplateSpec] = {}
        for spec in templates:
            self.add(spec, phone_number_id=phone_number_id)

    def add(self, spec: TemplateSpec, *, phone_number_id: str = ANY_NUMBER) -> None:
        self._templates[(phone_number_id, spec.name, spec.language)] = spec

    async def find(self, phone_number_id: str, name: str, language: str) -> TemplateSpec | None:
        return (self._templates.get((phone_number_id, name, language))
                or self._templates.get((ANY_NUMBER, name, language)))

    async def has_name(self, phone_number_id: str, name: str) -> bool:
        return any(number in (phone_number_id, ANY_NUMBER) and known == name
                   for number, known, _ in self._templates)


def parse_template_spec(text: str) -> TemplateSpec:
    """`NAME:LANG:PARAMS[:CATEGORY]` (the simulator command's --template). Raises InvalidTemplateSpec."""
    parts = text.split(":")
    if len(parts) not in (3, 4) or not parts[0] or not parts[1]:
        raise InvalidTemplateSpec(f"template {text!r} is not NAME:LANG:PARAMS[:CATEGORY]")
    try:
        count = int(parts[2])
    except ValueError:
        raise InvalidTemplateSpec(f"template {text!r}: PARAMS must be a whole number") from None
    if count < 0:
        raise InvalidTemplateSpec(f"template {text!r}: PARAMS must not be negative")
    category = parts[3].upper() if len(parts) == 4 else "UTILITY"
    if category not in CATEGORIES:
        raise InvalidTemplateSpec(f"template {text!r}: CATEGORY must be one of {', '.join(CATEGORIES)}")
    return TemplateSpec(name=parts[0], language=parts[1], parameter_count=count, category=category)
