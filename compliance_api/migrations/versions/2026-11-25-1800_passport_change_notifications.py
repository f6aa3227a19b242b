"""passport change notifications: PostgreSQL announces every change to a passport, its verifications or its shares

Each API process keeps the rows its passport routes read in memory and forgets them when `passport_changed` is
announced (passport/mirror.py). Statement-level triggers catch every writer: the API, the CLI, the retention purges
and the cascades of an account's deletion. SQLite has no notifications; its processes read the database instead.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 18:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("passport", "passport_verification", "passport_share")


def upgrade() -> None:
    if op.get_context().dialect.name != "postgresql":
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
    if op.get_context().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(f"DROP TRIGGER {table}_changed ON {table}")
    op.execute("DROP FUNCTION passport_changed()")
