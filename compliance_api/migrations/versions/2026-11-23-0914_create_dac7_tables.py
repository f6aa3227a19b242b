"""create dac7 tables

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 09:14:09.885553
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dac7_grant",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("seller_user_id", sa.Uuid(), nullable=False),
        sa.Column("grantee_user_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["grantee_user_id"],
            ["user_account.id"],
            name=op.f("fk_dac7_grant_grantee_user_id_user_account"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["seller_user_id"],
            ["user_account.id"],
            name=op.f("fk_dac7_grant_seller_user_id_user_account"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dac7_grant")),
    )
    with op.batch_alter_table("dac7_grant", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dac7_grant_environment"), ["environment"], unique=False)
        batch_op.create_index(batch_op.f("ix_dac7_grant_grantee_user_id"), ["grantee_user_id"], unique=False)
        batch_op.create_index(
            "uq_dac7_grant_active",
            ["seller_user_id", "grantee_user_id", "environment"],
            unique=True,
            sqlite_where=sa.text("revoked_at IS NULL"),
            postgresql_where=sa.text("revoked_at IS NULL"),
        )

    op.create_table(
        "dac7_seller",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("tin", sa.String(length=32), nullable=False),
        sa.Column("member_state", sa.String(length=2), nullable=False),
        sa.Column("tin_rule", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["user_account.id"], name=op.f("fk_dac7_seller_user_id_user_account"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dac7_seller")),
        sa.UniqueConstraint("user_id", "environment", name="uq_dac7_seller_user_id_environment"),
    )
    with op.batch_alter_table("dac7_seller", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dac7_seller_environment"), ["environment"], unique=False)
        batch_op.create_index(batch_op.f("ix_dac7_seller_user_id"), ["user_id"], unique=False)

    op.create_table(
        "dac7_activity",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("external_id", sa.String(length=64), nullable=False),
        sa.Column("seller_id", sa.Uuid(), nullable=False),
        sa.Column(
            "activity_type",
            sa.Enum("personal_services", "sale_of_goods", name="dac7_activity_type", native_enum=False, length=32),
            nullable=False,
        ),
        sa.Column("activity_date", sa.Date(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("quarter", sa.SmallInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("consideration_cents", sa.BigInteger(), nullable=False),
        sa.Column("fees_cents", sa.BigInteger(), nullable=False),
        sa.Column("taxes_cents", sa.BigInteger(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["seller_id"], ["dac7_seller.id"], name=op.f("fk_dac7_activity_seller_id_dac7_seller"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dac7_activity")),
        sa.UniqueConstraint("environment", "external_id", name="uq_dac7_activity_environment_external_id"),
    )
    with op.batch_alter_table("dac7_activity", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dac7_activity_environment"), ["environment"], unique=False)
        batch_op.create_index("ix_dac7_activity_seller_year", ["seller_id", "year"], unique=False)

    op.create_table(
        "dac7_report",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("seller_id", sa.Uuid(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("message_ref_id", sa.String(length=170), nullable=False),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["seller_id"], ["dac7_seller.id"], name=op.f("fk_dac7_report_seller_id_dac7_seller"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dac7_report")),
        sa.UniqueConstraint("seller_id", "year", name="uq_dac7_report_seller_id_year"),
    )


def downgrade() -> None:
    op.drop_table("dac7_report")
    with op.batch_alter_table("dac7_activity", schema=None) as batch_op:
        batch_op.drop_index("ix_dac7_activity_seller_year")
        batch_op.drop_index(batch_op.f("ix_dac7_activity_environment"))

    op.drop_table("dac7_activity")
    with op.batch_alter_table("dac7_seller", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dac7_seller_user_id"))
        batch_op.drop_index(batch_op.f("ix_dac7_seller_environment"))

    op.drop_table("dac7_seller")
    with op.batch_alter_table("dac7_grant", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_dac7_grant_active",
            sqlite_where=sa.text("revoked_at IS NULL"),
            postgresql_where=sa.text("revoked_at IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_dac7_grant_grantee_user_id"))
        batch_op.drop_index(batch_op.f("ix_dac7_grant_environment"))

    op.drop_table("dac7_grant")
