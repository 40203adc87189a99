"""Several nodes on one PostgreSQL: which node owns a workspace's actors, under a lease with an epoch that fences
its writes (`leases.py`). The service does not run as several nodes yet: nothing takes a lease while it serves."""
