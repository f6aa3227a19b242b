"""Sandbox retention: sandbox data older than the retention period is deleted, the documented fixtures stay."""
