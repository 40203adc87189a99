"""Who a connector's action runs as: the API key's caller (`use_cases/caller.py`: its creator, with the key's
effective permissions), named `api_key:<id>` in events and the audit log, and labelled `Zapier: <key name>` /
`Make: <key name>` on the messages it sends."""

from __future__ import annotations

from inbox_actors.connectors.model import Platform
from inbox_actors.domain.auth_ladder import Credential
from inbox_actors.use_cases.caller import Caller


def action_caller(credential: Credential, platform: Platform) -> Caller:
    return Caller.of_api_key(credential, label=f"{platform.title}: {credential.key_name}")
