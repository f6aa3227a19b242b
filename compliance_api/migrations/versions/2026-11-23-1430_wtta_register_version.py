"""wtta register version

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-23 14:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "wtta_register_version",
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("environment", name=op.f("pk_wtta_register_version")),
    )


def downgrade() -> None:
    op.drop_table("wtta_register_version")
