"""Several nodes, one service: a request for a workspace another node owns is relayed to it (`relay.py`)."""
