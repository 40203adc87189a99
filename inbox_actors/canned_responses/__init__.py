"""A workspace's canned responses: ready-made replies its members insert in the reply box by a short code typed
after "/" (`canned_set.py`: the set and its rules, each change in the team audit log), with placeholders for the
contact's and the member's names filled as they are inserted (`placeholders.py`).

Inserting one sends nothing: the member's reply is then sent as any reply is. So this area builds on nothing of the
conversations', and they import nothing of it.
"""
