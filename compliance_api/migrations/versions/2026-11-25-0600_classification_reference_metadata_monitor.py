"""classification reference, metadata and monitor

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.add_column(sa.Column("reference", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("client_metadata", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("monitor", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch.create_index("ix_classification_reference", ["environment", "user_id", "reference"])
        batch.create_index("ix_classification_monitor", ["environment", "monitor"])


def downgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.drop_index("ix_classification_monitor")
        batch.drop_index("ix_classification_reference")
        batch.drop_column("monitor")
        batch.drop_column("client_metadata")
        batch.drop_column("reference")
