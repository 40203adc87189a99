"""The messaging platform: the WhatsApp Cloud API client, the inbound webhook's envelope, and a simulator."""
