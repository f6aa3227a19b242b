"""api request: the request log (30 days; no bodies, tokens or query strings)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENVIRONMENT = sa.Enum("live", "test", name="environment", native_enum=False, length=16)


def upgrade() -> None:
    op.create_table(
        "api_request",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("token_id", sa.Uuid(), nullable=False),
        sa.Column("token_last4", sa.String(length=4), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("method", sa.String(length=10), nullable=False),
        sa.Column("path", sa.String(length=200), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("latency_us", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("rate_limit_remaining", sa.Integer(), nullable=True),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_request")),
    )
    op.create_index("ix_api_request_owner", "api_request", ["environment", "user_id", "created_at", "id"])
    op.create_index("ix_api_request_request_id", "api_request", ["request_id"])
    op.create_index(op.f("ix_api_request_environment"), "api_request", ["environment"])


def downgrade() -> None:
    op.drop_index(op.f("ix_api_request_environment"), table_name="api_request")
    op.drop_index("ix_api_request_request_id", table_name="api_request")
    op.drop_index("ix_api_request_owner", table_name="api_request")
    op.drop_table("api_request")
