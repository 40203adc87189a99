"""Message templates as the operator registers them (`inbox-actors template add|list|remove`), and their rules.

A template is what a business may send outside the customer's 24-hour window. Its rules follow Meta's:

- name: lowercase letters, digits and underscores, 1 to 512 characters (`order_update`);
- language: a locale code, `en`, `en_US`, `pt_BR` (two or three lowercase letters, optionally `_` and two
  uppercase letters);
- category: UTILITY (default), MARKETING or AUTHENTICATION; status: APPROVED (default), PENDING, REJECTED,
  PAUSED or DISABLED (only APPROVED templates can be sent);
- body: 1 to 1,024 characters; its parameters are the placeholders `{{1}}`, `{{2}}`, ... numbered from 1
  without gaps (a number may repeat); any other `{{...}}` is refused. The parameter count is the highest
  number; when given explicitly it must agree with the body.

A workspace holds one template per name and language.
"""

from __future__ import annotations

import re

import msgspec

from inbox_actors.domain.errors import OperatorError
from persistence.database import Database
from persistence.queries import templates as template_queries
from persistence.queries import workspaces as workspace_queries

CATEGORIES = ("UTILITY", "MARKETING", "AUTHENTICATION")
STATUSES = ("APPROVED", "PENDING", "REJECTED", "PAUSED", "DISABLED")
MAX_NAME_LENGTH = 512
MAX_BODY_LENGTH = 1024

_NAME = re.compile(r"[a-z0-9_]+")
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:_[A-Z]{2})?")
_BRACES = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_NUMBER = re.compile(r"[1-9][0-9]{0,2}")


class TemplateError(OperatorError):
    """A template request that breaks a rule; the message says which. Nothing was written."""


class Template(msgspec.Struct, frozen=True):
    """A template as the API and the CLI show it."""

    name: str
    language: str
    category: str
    status: str
    parameter_count: int
    body: str


class AddedTemplate(msgspec.Struct, frozen=True):
    template_id: int
    name: str
    language: str
    parameter_count: int


def template_name(name: str) -> str:
    if not 1 <= len(name) <= MAX_NAME_LENGTH or not _NAME.fullmatch(name):
        raise TemplateError(f"template name must be 1 to {MAX_NAME_LENGTH} lowercase letters, digits or "
                            f"underscores: {name!r}")
    return name


def language_code(language: str) -> str:
    if not _LANGUAGE.fullmatch(language):
        raise TemplateError(f"language must be a locale code such as en, en_US or pt_BR: {language!r}")
    return language


def category(value: str) -> str:
    if value.upper() not in CATEGORIES:
        raise TemplateError(f"category must be one of {', '.join(CATEGORIES)}")
    return value.upper()


def status(value: str) -> str:
    if value.upper() not in STATUSES:
        raise TemplateError(f"status must be one of {', '.join(STATUSES)}")
    return value.upper()


def placeholder_count(body: str) -> int:
    """The number of parameters the body takes: placeholders `{{1}}` to `{{n}}`, every number present."""
    numbers = set()
    for match in _BRACES.finditer(body):
        if not _NUMBER.fullmatch(match[1]):
            raise TemplateError(f"placeholders must be numbered {{{{1}}}}, {{{{2}}}}, ...: {match[0]!r}")
        numbers.add(int(match[1]))
    missing = sorted(set(range(1, max(numbers, default=0) + 1)) - numbers)
    if missing:
        raise TemplateError(f"placeholders must be numbered from {{{{1}}}} without gaps; missing "
                            f"{', '.join(f'{{{{{n}}}}}' for n in missing)}")
    return len(numbers)


def filled(body: str, parameters: list[str] | tuple[str, ...] | None) -> str:
    """The body as the customer got it: each `{{n}}` replaced by the n-th value (one with no value is left as it
    is), as the platform fills a template's body parameters."""
    values = list(parameters or ())

    def value(match: re.Match[str]) -> str:
        number = int(match[1]) if _NUMBER.fullmatch(match[1]) else 0
        return values[number - 1] if 0 < number <= len(values) else match[0]

    return _BRACES.sub(value, body)


def template_body(body: str) -> str:
    if not body.strip() or len(body) > MAX_BODY_LENGTH:
        raise TemplateError(f"template body must be 1 to {MAX_BODY_LENGTH:,} characters")
    return body


async def add_template(
    db: Database, *, workspace_id: int, name: str, language: str, body: str, category_name: str = "UTILITY",
    status_name: str = "APPROVED", parameters: int | None = None,
) -> AddedTemplate:
    name, language, body = template_name(name), language_code(language), template_body(body)
    category_value, status_value = category(category_name), status(status_name)
    counted = placeholder_count(body)
    if parameters is not None and parameters != counted:
        raise TemplateError(f"the body has {counted} parameter(s) but {parameters} were given")
    async with db.transaction() as tx:
        if await workspace_queries.find_workspace(tx, workspace_id) is None:
            raise TemplateError(f"no workspace {workspace_id}")
        row = await template_queries.insert_template(
            tx, workspace_id=workspace_id, name=name, language=language, category=category_value,
            status=status_value, parameter_count=counted, body=body)
        if row is None:
            raise TemplateError(f"workspace {workspace_id} already has template {name} in {language}; "
                                "remove it first")
    return AddedTemplate(template_id=row["id"], name=name, language=language, parameter_count=counted)


async def list_templates(db: Database, *, workspace_id: int, status_name: str | None = None,
                         name: str | None = None, language: str | None = None) -> list[Template]:
    """The workspace's templates by name, then language (an unknown workspace is an error)."""
    if await workspace_queries.find_workspace(db, workspace_id) is None:
        raise TemplateError(f"no workspace {workspace_id}")
    return await workspace_templates(
        db, workspace_id, status_name=status(status_name) if status_name is not None else None, name=name,
        language=language)


async def workspace_templates(db: Database, workspace_id: int, *, status_name: str | None = None,
                              name: str | None = None, language: str | None = None) -> list[Template]:
    """The templates of a workspace known to exist, by name, then language; each filter given must match
    exactly (`status_name` as stored: upper case)."""
    rows = await template_queries.list_templates(db, workspace_id, status=status_name, name=name,
                                                 language=language)
    return [template_view(row) for row in rows]


async def remove_template(db: Database, *, workspace_id: int, name: str, language: str) -> Template:
    async with db.transaction() as tx:
        row = await template_queries.delete_template(tx, workspace_id, name, language)
    if row is None:
        raise TemplateError(f"no template {name} in {language} in workspace {workspace_id}")
    return template_view(row)


def template_view(row) -> Template:
    return Template(name=row["name"], language=row["language"], category=row["category"], status=row["status"],
                    parameter_count=row["parameter_count"], body=row["body"])
