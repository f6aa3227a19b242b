"""wtta refused file: the register file the scheduled refresh last refused from a URL (validators, hash, reason)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENVIRONMENT = sa.Enum("live", "test", name="environment", native_enum=False, length=16)


def upgrade() -> None:
    op.create_table(
        "wtta_refused_file",
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.Column("location_sha256", sa.String(length=64), nullable=False),
        sa.Column("location", sa.String(length=2000), nullable=False),
        sa.Column("etag", sa.String(length=500), nullable=True),
        sa.Column("last_modified", sa.String(length=100), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("error", sa.String(length=1000), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("environment", "location_sha256", name=op.f("pk_wtta_refused_file")),
    )


def downgrade() -> None:
    op.drop_table("wtta_refused_file")
