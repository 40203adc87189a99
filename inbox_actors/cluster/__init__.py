"""Several nodes on one PostgreSQL: which node runs a workspace's actors (`placement.py`), under a lease with an
epoch that can fence its writes (`leases.py`)."""
