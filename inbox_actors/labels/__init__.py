"""The workspace's label set: the labels its team puts on chats, each a name unique whatever its case and a
colour (`label_set.py`), each change recorded in the team audit log.

Putting a label on a chat is the chat's own action (its conversation actor, `conversations/chat_handling.py`),
which reads the set from the database; so this area builds on nothing of the conversations', and they import
nothing of it.
"""
