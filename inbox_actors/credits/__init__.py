"""A workspace's message credits: the balance template sends are charged against, its top-ups and the ledger of
every change. The charge itself is part of the statement that commits a send's pending message
(`persistence/queries/messages.py`), so a send and its charge are one write."""
