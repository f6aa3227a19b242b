"""classification verdict history and re-score runs

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 06:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENVIRONMENT = sa.Enum("live", "test", name="environment", native_enum=False, length=16)


def upgrade() -> None:
    op.create_table(
        "classification_verdict",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("classification_id", sa.Uuid(), nullable=False),
        sa.Column("supersedes_id", sa.Uuid(), nullable=True),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("previous_verdict", sa.String(length=16), nullable=False),
        sa.Column("ruleset_version", sa.String(length=32), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["classification_id"],
            ["classification.id"],
            name=op.f("fk_classification_verdict_classification_id_classification"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["supersedes_id"],
            ["classification_verdict.id"],
            name=op.f("fk_classification_verdict_supersedes_id_classification_verdict"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_classification_verdict")),
    )
    op.create_index(
        "ix_classification_verdict_classification", "classification_verdict", ["classification_id", "created_at"]
    )
    op.create_index(op.f("ix_classification_verdict_environment"), "classification_verdict", ["environment"])
    op.create_table(
        "classification_rescore_run",
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.Column("ran_on", sa.Date(), nullable=False),
        sa.Column("rulesets", sa.String(length=400), nullable=False),
        sa.Column("ran_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("environment", name=op.f("pk_classification_rescore_run")),
    )


def downgrade() -> None:
    op.drop_table("classification_rescore_run")
    op.drop_table("classification_verdict")
