"""The outbox: events written in the same transaction as the change they describe, delivered later (webhooks)."""
