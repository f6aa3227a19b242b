"""The request log: each authenticated API request, buffered in memory and written in batches off the hot path."""
