"""The AI agent: a language model that answers customers grounded in the workspace's knowledge (FAQ answers and
articles, searched in the workspace's language) and quotes prices only from its pricing sheets."""
