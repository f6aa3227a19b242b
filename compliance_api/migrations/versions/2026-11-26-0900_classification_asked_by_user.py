"""classification asked by: the dashboard user who submitted it (no token), and the request id it was answered under

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every existing row came from an API call: its token_id stays, asked_by_user_id and request_id stay empty.
    with op.batch_alter_table("classification") as batch:
        batch.alter_column("token_id", existing_type=sa.Uuid(), nullable=True)
        batch.add_column(sa.Column("asked_by_user_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("request_id", sa.String(length=128), nullable=True))
        batch.create_foreign_key(
            batch.f("fk_classification_asked_by_user_id_user_account"),
            "user_account",
            ["asked_by_user_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.create_index(
            "ix_classification_asked_by_user_id",
            ["asked_by_user_id"],
            sqlite_where=sa.text("asked_by_user_id IS NOT NULL"),
            postgresql_where=sa.text("asked_by_user_id IS NOT NULL"),
        )


def downgrade() -> None:
    # A dashboard submission has no token, and audit records are not deleted to make room for a downgrade.
    tokenless = op.get_bind().scalar(sa.text("SELECT count(*) FROM classification WHERE token_id IS NULL"))
    if tokenless:
        raise RuntimeError(
            f"{tokenless} classifications were submitted from the dashboard (no token_id); "
            "revision 0018 cannot hold them. Keep revision 0019, or export and remove those records first."
        )
    with op.batch_alter_table("classification") as batch:
        batch.drop_index("ix_classification_asked_by_user_id")
        batch.drop_constraint(batch.f("fk_classification_asked_by_user_id_user_account"), type_="foreignkey")
        batch.drop_column("request_id")
        batch.drop_column("asked_by_user_id")
        batch.alter_column("token_id", existing_type=sa.Uuid(), nullable=False)
