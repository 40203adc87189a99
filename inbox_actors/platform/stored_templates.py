"""The simulator's template catalog read from the service's own `templates` table.

With it, the in-process simulator accepts exactly the templates `GET /api/templates` lists (and the CLI
adds): the service and its platform never disagree about which templates exist.
"""

from __future__ import annotations

from inbox_actors.platform.template_catalog import TemplateSpec
from persistence.database import Database
from persistence.queries import templates as template_queries


class StoredTemplateCatalog:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def find(self, phone_number_id: str, name: str, language: str) -> TemplateSpec | None:
        row = await template_queries.find_template_for_number(self._db, phone_number_id, name, language)
        if row is None:
            return None
        return TemplateSpec(name=row["name"], language=row["language"], parameter_count=row["parameter_count"],
                            category=row["category"])

    async def has_name(self, phone_number_id: str, name: str) -> bool:
        return await template_queries.template_name_exists_for_number(self._db, phone_number_id, name)
