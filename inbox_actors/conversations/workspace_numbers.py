"""Each workspace's business number (`phone_number_id`), read from PostgreSQL once per process and shared by
its chats.

It is the one thing a chat needs of its workspace, and it never changes: it is set when the workspace is made and
no statement updates it. So the cache needs no invalidation, and a chat's activation reads only its own row once
its workspace's number is known here. Not actor-owned: nothing about it can race (the first reads of a workspace
may overlap; they read the same value). It holds one short string per workspace the process has served.
"""

from __future__ import annotations

from persistence.database import Record


class WorkspaceNumbers:
    def __init__(self) -> None:
        self._numbers: dict[int, str] = {}

    def get(self, workspace_id: int) -> str | None:
        return self._numbers.get(workspace_id)

    def learn(self, workspace: Record) -> str:
        """Remember the number of a workspace row read with `phone_number_id`; the number."""
        number = self._numbers[workspace["id"]] = workspace["phone_number_id"]
        return number
