"""wtta admission cache and outbox

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 02:26:19.788777
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox_event",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_event")),
    )
    with op.batch_alter_table("outbox_event", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_outbox_event_environment"), ["environment"], unique=False)
        batch_op.create_index("ix_outbox_event_pending", ["delivered_at", "created_at"], unique=False)

    op.create_table(
        "wtta_admission",
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.Column("kvk_number", sa.String(length=8), nullable=False),
        sa.Column("legal_name", sa.String(length=300), nullable=False),
        sa.Column(
            "admission_status",
            sa.Enum(
                "unknown",
                "applied",
                "admitted",
                "conditionally_admitted",
                "revoked",
                "suspended",
                "expired",
                "not_required",
                name="admission_status",
                native_enum=False,
                length=32,
            ),
            nullable=False,
        ),
        sa.Column("admission_number", sa.String(length=64), nullable=True),
        sa.Column("admitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("source_url", sa.String(length=2000), nullable=True),
        sa.Column("last_verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("missing_from_source_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("environment", "kvk_number", name=op.f("pk_wtta_admission")),
    )
    op.create_table(
        "wtta_import",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("location", sa.String(length=2000), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("source_url", sa.String(length=2000), nullable=True),
        sa.Column("full", sa.Boolean(), nullable=False),
        sa.Column("not_modified", sa.Boolean(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rows_read", sa.Integer(), nullable=False),
        sa.Column("rows_created", sa.Integer(), nullable=False),
        sa.Column("rows_changed", sa.Integer(), nullable=False),
        sa.Column("status_changes", sa.Integer(), nullable=False),
        sa.Column("rows_missing", sa.Integer(), nullable=False),
        sa.Column("covers_all", sa.Boolean(), nullable=False),
        sa.Column("etag", sa.String(length=500), nullable=True),
        sa.Column("last_modified", sa.String(length=100), nullable=True),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wtta_import")),
    )
    with op.batch_alter_table("wtta_import", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_wtta_import_environment"), ["environment"], unique=False)
        batch_op.create_index(batch_op.f("ix_wtta_import_finished_at"), ["finished_at"], unique=False)

    op.create_table(
        "wtta_status_change",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.Column("kvk_number", sa.String(length=8), nullable=False),
        sa.Column(
            "from_status",
            sa.Enum(
                "unknown",
                "applied",
                "admitted",
                "conditionally_admitted",
                "revoked",
                "suspended",
                "expired",
                "not_required",
                name="admission_status",
                native_enum=False,
                length=32,
            ),
            nullable=True,
        ),
        sa.Column(
            "to_status",
            sa.Enum(
                "unknown",
                "applied",
                "admitted",
                "conditionally_admitted",
                "revoked",
                "suspended",
                "expired",
                "not_required",
                name="admission_status",
                native_enum=False,
                length=32,
            ),
            nullable=False,
        ),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("import_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wtta_status_change")),
    )
    with op.batch_alter_table("wtta_status_change", schema=None) as batch_op:
        batch_op.create_index("ix_wtta_status_change_kvk", ["environment", "kvk_number", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("wtta_status_change", schema=None) as batch_op:
        batch_op.drop_index("ix_wtta_status_change_kvk")

    op.drop_table("wtta_status_change")
    with op.batch_alter_table("wtta_import", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_wtta_import_finished_at"))
        batch_op.drop_index(batch_op.f("ix_wtta_import_environment"))

    op.drop_table("wtta_import")
    op.drop_table("wtta_admission")
    with op.batch_alter_table("outbox_event", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_event_pending")
        batch_op.drop_index(batch_op.f("ix_outbox_event_environment"))

    op.drop_table("outbox_event")
