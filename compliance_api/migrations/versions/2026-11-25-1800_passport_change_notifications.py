"""passport changes: every change to a passport, its verifications or its shares is announced (PostgreSQL) or counted (SQLite)

Each API process keeps the rows its passport routes read in memory and forgets them on a change (passport/mirror.py).
Triggers catch every writer: the API, the CLI, the retention purges and the cascades of an account's deletion.
PostgreSQL: statement triggers `NOTIFY passport_changed`. SQLite, which has no notifications: row triggers raise
`passport_change.version`, which a process reads before answering from memory.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("passport", "passport_verification", "passport_share")


COUNT = "INSERT INTO passport_change (id, version) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET version = version + 1"


def upgrade() -> None:
    op.create_table(
        "passport_change",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_passport_change")),
    )
    if op.get_context().dialect.name == "sqlite":
        for table in TABLES:
            for action in ("INSERT", "UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_{action.lower()}_counted AFTER {action} ON {table} BEGIN {COUNT}; END"
                )
        return
    op.execute(
        """
        CREATE FUNCTION passport_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('passport_changed', '');
            RETURN NULL;
        END
        $$
        """
    )
    for table in TABLES:
        op.execute(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION passport_changed()"
        )


def downgrade() -> None:
    if op.get_context().dialect.name == "sqlite":
        for table in TABLES:
            for action in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER {table}_{action}_counted")
    else:
        for table in TABLES:
            op.execute(f"DROP TRIGGER {table}_changed ON {table}")
        op.execute("DROP FUNCTION passport_changed()")
    op.drop_table("passport_change")
