"""dashboard accounts sessions and password resets

Revision ID: 0009
Revises: 0007
Create Date: 2026-11-23 09:21:45.564746
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_password",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["user_account.id"], name=op.f("fk_account_password_user_id_user_account"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_account_password")),
    )
    op.create_table(
        "dashboard_session",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["user_account.id"], name=op.f("fk_dashboard_session_user_id_user_account"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_session")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_dashboard_session_token_hash")),
    )
    with op.batch_alter_table("dashboard_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dashboard_session_user_id"), ["user_id"], unique=False)

    op.create_table(
        "password_reset",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["user_account.id"], name=op.f("fk_password_reset_user_id_user_account"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_reset")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_password_reset_token_hash")),
    )
    with op.batch_alter_table("password_reset", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_reset_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("password_reset", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_reset_user_id"))

    op.drop_table("password_reset")
    with op.batch_alter_table("dashboard_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dashboard_session_user_id"))

    op.drop_table("dashboard_session")
    op.drop_table("account_password")
