"""outbox event owner, for the event log

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The payload field naming the account, per event type (as compliance_api/events/types.py had it at this revision).
OWNER_FIELDS = {
    "passport.updated": "freelancer_id",
    "passport.share.viewed": "freelancer_id",
    "dac7.snapshot.updated": "freelancer_id",
    "classification.created": "user_id",
    "classification.verdict_changed": "user_id",
    "api_token.created": "user_id",
    "api_token.revoked": "user_id",
    "webhook.endpoint.failing": "user_id",
}


# SQLite keeps a UUID as 32 hex digits (SQLAlchemy's Uuid type without native support).
BACKFILL_POSTGRESQL = "UPDATE outbox_event SET owner_id = CAST(payload->>:field AS uuid) WHERE type = :type"
BACKFILL_SQLITE = (
    "UPDATE outbox_event SET owner_id = replace(json_extract(payload, '$.' || :field), '-', '') WHERE type = :type"
)


def upgrade() -> None:
    with op.batch_alter_table("outbox_event") as batch:
        batch.add_column(sa.Column("owner_id", sa.Uuid(), nullable=True))
    postgresql = op.get_bind().dialect.name == "postgresql"
    backfill = sa.text(BACKFILL_POSTGRESQL if postgresql else BACKFILL_SQLITE)
    for event_type, field in OWNER_FIELDS.items():
        op.execute(backfill.bindparams(type=event_type, field=field))
    with op.batch_alter_table("outbox_event") as batch:
        batch.create_index("ix_outbox_event_owner", ["environment", "owner_id", "created_at", "id"])


def downgrade() -> None:
    with op.batch_alter_table("outbox_event") as batch:
        batch.drop_index("ix_outbox_event_owner")
        batch.drop_column("owner_id")
