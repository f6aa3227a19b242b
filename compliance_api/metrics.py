"""Prometheus metrics: requests, latencies, rate-limit rejections, webhook delivery attempts, WTTA lookups, the Redis
circuit breaker, the request log's losses."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("compliance_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram(
    "compliance_request_duration_seconds",
    "HTTP request duration",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
RATE_LIMITED = Counter("compliance_rate_limited_total", "Requests rejected by the rate limiter", ["tier"])
WEBHOOK_ATTEMPTS = Counter(
    "compliance_webhook_attempts_total", "Webhook delivery attempts", ["outcome"]
)  # outcome: success, http_error, network_error
WEBHOOK_LATENCY = Histogram(
    "compliance_webhook_attempt_duration_seconds",
    "Webhook delivery attempt duration",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0),
)
WTTA_LOOKUP_READS = Counter(
    "compliance_wtta_lookup_reads_total", "WTTA lookups by where they were answered from", ["read"]
)  # read: memory (the process's copy of the register), database (copy absent, loading or out of date)
PASSPORT_READS = Counter(
    "compliance_passport_reads_total", "Passport route reads by where they were answered from", ["read"]
)  # read: memory (the process's copy, PostgreSQL only), database
WTTA_REPLICA_ROWS = Gauge(
    "compliance_wtta_replica_rows", "Rows of the WTTA register held in this process's memory", ["environment"]
)
REDIS_BREAKER_STATE = Gauge(
    "compliance_redis_breaker_state", "The Redis rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open"
)  # open: this process decides rate limits with its own buckets
REDIS_BREAKER_TRANSITIONS = Counter(
    "compliance_redis_breaker_transitions_total", "State changes of the Redis rate limiter's circuit breaker", ["state"]
)  # state: the state entered (closed, open, half_open)
WTTA_REFRESHES = Counter(
    "compliance_wtta_refreshes_total", "Scheduled refreshes of the WTTA register cache from its URL", ["outcome"]
)  # outcome: imported, not_modified (the server answered 304), failed (retried with backoff), refused (a bad file,
#   remembered), refused_unchanged (the refused file again: answered 304 to its validators, or the same bytes)
REQUEST_LOG_DROPPED = Counter(
    "compliance_request_log_dropped_total", "Requests the request log did not keep", ["reason"]
)  # reason: buffer_full (the in-memory buffer was full), write_failed (a batch could not be written)
