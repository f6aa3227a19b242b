"""webhook deliveries due, by type: the worker claims due test events first, without reading every due delivery

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 12:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_webhook_delivery_due_type", "webhook_delivery", ["status", "event_type", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_delivery_due_type", table_name="webhook_delivery")
