"""Event-log tests use the webhook tests' accounts, receiver and worker."""

from __future__ import annotations

from tests.webhooks.conftest import (  # noqa: F401  (the fixtures, registered here by the import)
    make_account,
    receiver,
    worker,
)
