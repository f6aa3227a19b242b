"""create idempotency record

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 02:33:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_record",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.LargeBinary(), nullable=True),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["user_account.id"],
            name=op.f("fk_idempotency_record_user_id_user_account"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_record")),
        sa.UniqueConstraint("user_id", "environment", "key_hash", name="uq_idempotency_record_key"),
    )
    with op.batch_alter_table("idempotency_record", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotency_record_environment"), ["environment"], unique=False)
        batch_op.create_index(batch_op.f("ix_idempotency_record_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("idempotency_record", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_record_expires_at"))
        batch_op.drop_index(batch_op.f("ix_idempotency_record_environment"))

    op.drop_table("idempotency_record")
