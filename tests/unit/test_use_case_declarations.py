"""The use cases' declarations as a whole: each declared once, bound by name, and the architecture page's example
the code it shows."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from inbox_actors import use_cases
from inbox_actors.use_cases import catalog, chat_organising, chats, permissions
from inbox_actors.use_cases.use_case import UseCase, field_rules

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> list[tuple[str, UseCase]]:
    found = []
    for module in pkgutil.iter_modules(use_cases.__path__):
        loaded = importlib.import_module(f"inbox_actors.use_cases.{module.name}")
        found += [(f"{module.name}.{name}", value) for name, value in vars(loaded).items()
                  if isinstance(value, UseCase) and not name.startswith("_")]
    return found


def test_every_use_case_has_one_name_and_a_permission():
    declared = {id(use_case): (where, use_case) for where, use_case in _declared()}
    names = [use_case.name for _, use_case in declared.values()]
    assert len(names) == len(set(names)), sorted(name for name in names if names.count(name) > 1)
    for where, use_case in declared.values():
        assert use_case.permissions or use_case.admin is not None, where
        assert all(isinstance(p, str) for p in use_case.permissions), where


def test_every_tool_is_a_declared_use_case():
    declared = {id(use_case) for _, use_case in _declared()}
    assert all(id(action.use_case) in declared for action in catalog.ACTIONS)


def test_a_field_s_declared_rule_is_found_through_optional_types():
    assert field_rules(chats.ChatWithReason)["reason"].code == "invalid_reason"
    assert field_rules(chat_organising.SnoozeChat)["until"].code == "invalid_until"
    phone = field_rules(chats.ChatWithReason)["phone"]
    assert (phone.code, phone.status) == ("not_found", 404)  # text that is no phone names no chat
    assert "to" not in field_rules(chats.SendText)  # a send's recipient is refused in msgspec's words


def test_the_architecture_page_shows_the_declaration_as_the_code_has_it():
    page = (ROOT / "docs" / "architecture.md").read_text()
    example = re.search(r"### A use case, declared once.*?```python\n(.*?)```", page, re.S)
    assert example is not None
    source = (ROOT / "inbox_actors" / "use_cases" / "chats.py").read_text()
    for line in example.group(1).splitlines():
        code = line.split("#")[0].rstrip()
        if code.strip():
            assert code in source, f"docs/architecture.md shows a line chats.py no longer has: {code!r}"
    assert chats.RELEASE.permissions == permissions.CHAT_ACTIONS
