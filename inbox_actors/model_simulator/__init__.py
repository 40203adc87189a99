"""The built-in language-model simulator: a grounded model behind OpenAI's Chat Completions protocol, so tests and
the demo run the service's AI agent without a real model (grounded behaviour, simulated model, HTTP routes)."""
