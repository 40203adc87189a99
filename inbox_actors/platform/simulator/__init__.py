"""The built-in WhatsApp Cloud API simulator: model (state and behaviour), rules, state, HTTP app, server, command."""
