"""Idempotency-Key: a POST that creates something runs once per caller and key; a retry replays the first answer."""
