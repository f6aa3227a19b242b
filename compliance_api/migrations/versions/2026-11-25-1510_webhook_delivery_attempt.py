"""webhook delivery attempts, one row each, for the delivery log

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 15:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENVIRONMENT = sa.Enum("live", "test", name="environment", native_enum=False, length=16)


def upgrade() -> None:
    op.create_table(
        "webhook_delivery_attempt",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_delivery.id"],
            name=op.f("fk_webhook_delivery_attempt_delivery_id_webhook_delivery"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_delivery_attempt")),
    )
    op.create_index("ix_webhook_delivery_attempt_delivery", "webhook_delivery_attempt", ["delivery_id", "attempted_at"])
    op.create_index(op.f("ix_webhook_delivery_attempt_environment"), "webhook_delivery_attempt", ["environment"])


def downgrade() -> None:
    op.drop_index(op.f("ix_webhook_delivery_attempt_environment"), table_name="webhook_delivery_attempt")
    op.drop_index("ix_webhook_delivery_attempt_delivery", table_name="webhook_delivery_attempt")
    op.drop_table("webhook_delivery_attempt")
