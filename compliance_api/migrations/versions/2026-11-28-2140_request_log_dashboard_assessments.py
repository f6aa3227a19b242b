"""request log: dashboard assessments (checks and saves) are logged too, with no token

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28 21:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_request", schema=None) as batch_op:
        batch_op.alter_column("token_id", existing_type=sa.Uuid(), nullable=True)
        batch_op.alter_column("token_last4", existing_type=sa.String(4), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM api_request WHERE token_id IS NULL")
    with op.batch_alter_table("api_request", schema=None) as batch_op:
        batch_op.alter_column("token_last4", existing_type=sa.String(4), nullable=False)
        batch_op.alter_column("token_id", existing_type=sa.Uuid(), nullable=False)
