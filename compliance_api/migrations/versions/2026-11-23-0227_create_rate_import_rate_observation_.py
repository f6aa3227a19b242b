"""create rate_import rate_observation rate_benchmark

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 02:27:35.125250
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_benchmark",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("sector", sa.String(length=40), nullable=False),
        sa.Column("region", sa.String(length=5), nullable=False),
        sa.Column("p25_eur", sa.Float(), nullable=False),
        sa.Column("p50_eur", sa.Float(), nullable=False),
        sa.Column("p75_eur", sa.Float(), nullable=False),
        sa.Column("sample_size", sa.Integer(), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_months", sa.Integer(), nullable=False),
        sa.Column("synthetic", sa.Boolean(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_benchmark")),
        sa.UniqueConstraint("environment", "sector", "region", name="uq_rate_benchmark_pair"),
    )
    with op.batch_alter_table("rate_benchmark", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rate_benchmark_environment"), ["environment"], unique=False)

    op.create_table(
        "rate_import",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=300), nullable=False),
        sa.Column("synthetic", sa.Boolean(), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_import")),
        sa.UniqueConstraint("environment", "content_sha256", name="uq_rate_import_content"),
    )
    with op.batch_alter_table("rate_import", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rate_import_environment"), ["environment"], unique=False)

    op.create_table(
        "rate_observation",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("import_id", sa.Uuid(), nullable=False),
        sa.Column("sector", sa.String(length=40), nullable=False),
        sa.Column("region", sa.String(length=5), nullable=False),
        sa.Column("rate_cents", sa.Integer(), nullable=False),
        sa.Column("observed_on", sa.Date(), nullable=False),
        sa.Column("synthetic", sa.Boolean(), nullable=False),
        sa.Column(
            "environment", sa.Enum("live", "test", name="environment", native_enum=False, length=16), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["import_id"],
            ["rate_import.id"],
            name=op.f("fk_rate_observation_import_id_rate_import"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_observation")),
    )
    with op.batch_alter_table("rate_observation", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rate_observation_environment"), ["environment"], unique=False)
        batch_op.create_index(batch_op.f("ix_rate_observation_import_id"), ["import_id"], unique=False)
        batch_op.create_index(
            "ix_rate_observation_pair",
            ["environment", "sector", "region", "observed_on"],
            unique=False,
            postgresql_include=["rate_cents", "synthetic"],
        )


def downgrade() -> None:
    with op.batch_alter_table("rate_observation", schema=None) as batch_op:
        batch_op.drop_index("ix_rate_observation_pair")
        batch_op.drop_index(batch_op.f("ix_rate_observation_import_id"))
        batch_op.drop_index(batch_op.f("ix_rate_observation_environment"))

    op.drop_table("rate_observation")
    with op.batch_alter_table("rate_import", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rate_import_environment"))

    op.drop_table("rate_import")
    with op.batch_alter_table("rate_benchmark", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rate_benchmark_environment"))

    op.drop_table("rate_benchmark")
