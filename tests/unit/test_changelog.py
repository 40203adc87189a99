"""The spec, Versioning: "Documented calls keep their shape, and any change to one is announced in a changelog."

`http/documented-api.json` is the documented part of the generated OpenAPI document; the newest entry of
CHANGELOG.md names its digest. Changing a documented call without announcing it fails here."""

import re
from pathlib import Path

from inbox_http.app import create_app
from inbox_http.openapi import API_VERSION, build_document, documented_digest, documented_text

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "http" / "documented-api.json"
CHANGELOG = ROOT / "CHANGELOG.md"


def test_the_documented_calls_are_as_the_snapshot_has_them():
    generated = documented_text(build_document(create_app(None)))
    assert SNAPSHOT.read_text() == generated, (
        "A documented call changed. Announce it: regenerate the snapshot with `.venv/bin/python -m "
        "inbox_http.openapi --documented > http/documented-api.json`, then add an entry to CHANGELOG.md that says "
        f"what changed and names `Documented API: {documented_digest(generated)}`.")


def test_the_newest_changelog_entry_names_the_documented_api_it_describes():
    entries = re.split(r"^## ", CHANGELOG.read_text(), flags=re.M)[1:]
    assert entries, "CHANGELOG.md has no entry"
    newest = entries[0]
    assert re.match(r"\[\d+\.\d+\.\d+(\+r\d+)?\] - \d{4}-\d{2}-\d{2}\n", newest), (
        "an entry opens `## [version] - date`, the version a revision `+r<n>` of the specification's")
    digest = documented_digest(SNAPSHOT.read_text())
    assert f"Documented API: `{digest}`" in newest, (
        f"The documented calls changed since CHANGELOG.md's newest entry: announce the change in a new entry that "
        f"names `Documented API: {digest}`.")


def test_the_changelog_carries_the_api_version():
    """The specification fixes the description's version at 1.0.0; the changelog's entries are its revisions."""
    newest = re.split(r"^## ", CHANGELOG.read_text(), flags=re.M)[1]
    assert API_VERSION == "1.0.0" and newest.startswith(f"[{API_VERSION}")


def test_a_change_to_a_documented_call_changes_the_digest():
    document = build_document(create_app(None))
    before = documented_text(document)
    document["paths"]["/api/send-message"]["post"]["summary"] += " (changed)"
    undocumented = next(path for path, operations in document["paths"].items()
                        if not any(op.get("x-documented") for op in operations.values() if isinstance(op, dict)))
    assert documented_text(document) != before
    document["paths"]["/api/send-message"]["post"]["summary"] = document["paths"]["/api/send-message"]["post"][
        "summary"].removesuffix(" (changed)")
    first = next(iter(document["paths"][undocumented].values()))
    first["summary"] = "an internal route may change unannounced"
    assert documented_text(document) == before
