"""The Reporting API's reads: one statement per page, each walking an index (see migration 004)."""
