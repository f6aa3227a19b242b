"""classification language: the one the verdict's texts were written in

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every verdict before this revision was written in English; the server default fills the existing rows.
    with op.batch_alter_table("classification") as batch:
        batch.add_column(sa.Column("language", sa.String(length=2), nullable=False, server_default="en"))


def downgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.drop_column("language")
