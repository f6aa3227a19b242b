"""WTTA admission register cache: imports, lookups, status history and sandbox fixtures."""
