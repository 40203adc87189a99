"""The bot as the team manages it: its settings (on or off, persona, hand-off words), its FAQ answers and the trail
of the chats it handed to a person (`settings.py`), each change recorded in the team audit log.

The bot that answers customers is the conversations' (`conversations/bot.py`: the matching, the answer rules and
the cached responder); this area builds on it and is never imported by it.
"""
