"""Several nodes on one PostgreSQL: which node runs a workspace's actors (`placement.py`), under a lease with an
epoch that can fence its writes (`leases.py`), and how a node's death is seen within a second (`liveness.py`, the
lock each node holds; `crash_watch.py`, the nodes that watch it)."""
