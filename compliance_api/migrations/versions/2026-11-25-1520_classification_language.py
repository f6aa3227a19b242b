"""classification language: the one the verdict's texts were written in

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 15:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every verdict before this revision was written in English; the server default fills the existing rows.
    with op.batch_alter_table("classification") as batch:
        batch.add_column(sa.Column("language", sa.String(length=2), nullable=False, server_default="en"))


def downgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.drop_column("language")
