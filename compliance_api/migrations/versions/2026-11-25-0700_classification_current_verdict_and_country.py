"""classification current verdict and country, for lists

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The verdict as answered, and the test's country; then the newest re-scored verdict where there is one.
FROM_RESULT_POSTGRESQL = "UPDATE classification SET verdict = result->>'verdict', country = request->>'country'"
FROM_RESULT_SQLITE = (
    "UPDATE classification SET verdict = json_extract(result, '$.verdict'), "
    "country = json_extract(request, '$.country')"
)
FROM_HISTORY_POSTGRESQL = (
    "UPDATE classification SET verdict = v.verdict FROM (SELECT DISTINCT ON (classification_id) classification_id, "
    "verdict FROM classification_verdict ORDER BY classification_id, created_at DESC) AS v "
    "WHERE v.classification_id = classification.id"
)
FROM_HISTORY_SQLITE = (
    "UPDATE classification SET verdict = (SELECT v.verdict FROM classification_verdict AS v "
    "WHERE v.classification_id = classification.id ORDER BY v.created_at DESC LIMIT 1) "
    "WHERE EXISTS (SELECT 1 FROM classification_verdict AS v WHERE v.classification_id = classification.id)"
)


def upgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.add_column(sa.Column("verdict", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("country", sa.String(length=2), nullable=True))
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute(FROM_RESULT_POSTGRESQL if postgresql else FROM_RESULT_SQLITE)
    op.execute(FROM_HISTORY_POSTGRESQL if postgresql else FROM_HISTORY_SQLITE)
    with op.batch_alter_table("classification") as batch:
        batch.alter_column("verdict", existing_type=sa.String(length=16), nullable=False)
        batch.create_index("ix_classification_list", ["environment", "user_id", "created_at", "id"])


def downgrade() -> None:
    with op.batch_alter_table("classification") as batch:
        batch.drop_index("ix_classification_list")
        batch.drop_column("country")
        batch.drop_column("verdict")
