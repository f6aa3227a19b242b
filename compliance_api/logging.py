"""Structured JSON logs on stdout, one object per line."""

from __future__ import annotations

import logging

import orjson
import structlog

# File descriptor 1 itself rather than `sys.stdout`, which test runners and frameworks swap out: loggers are
# cached on first use, and must keep writing to wherever stdout points now.
STDOUT = open(1, "wb", closefd=False)


def configure_logging(level: str = "info") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.BytesLoggerFactory(STDOUT),
        cache_logger_on_first_use=True,
    )
