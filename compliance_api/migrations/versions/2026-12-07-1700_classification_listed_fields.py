"""classification list without decompressing: `classification.original_verdict` and `ruleset_valid_from`, the two
fields of the list's items that only the stored verdict (`result`, zstd) held

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07 17:00:00

Existing rows are filled from their stored verdict (`result["verdict"]`, `result["ruleset"]["valid_from"]`), a
thousand at a time in id order; a stored verdict without them (none the API answered) gets the row's current verdict
and its ruleset version's date. Both columns are NOT NULL, as the model says. PostgreSQL adds them nullable and sets
NOT NULL once they are filled; SQLite can only add a NOT NULL column with a default (making one NOT NULL later
rebuilds the table, and dropping the old one would cascade to `classification_verdict`), so there each gets a
placeholder default that every row's filled value replaces and the service never relies on (it always writes both).
"""

import datetime as dt
from collections.abc import Sequence

import orjson
import sqlalchemy as sa
from alembic import op

from compliance_api.classify.compression import decompress

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000


def _fill() -> None:
    connection = op.get_bind()
    # The batch size is this migration's own constant; every value is bound.
    columns = "id, result, verdict, ruleset_version"
    first = sa.text(f"SELECT {columns} FROM classification ORDER BY id LIMIT {BATCH}")  # noqa: S608
    after_id = sa.text(f"SELECT {columns} FROM classification WHERE id > :after ORDER BY id LIMIT {BATCH}")  # noqa: S608
    update = sa.text(
        "UPDATE classification SET original_verdict = :verdict, ruleset_valid_from = :valid_from WHERE id = :id"
    ).bindparams(sa.bindparam("valid_from", type_=sa.Date()))
    after = None
    while True:
        rows = connection.execute(first if after is None else after_id, {} if after is None else {"after": after})
        batch = rows.all()
        if not batch:
            return
        values = []
        for row_id, stored, verdict, ruleset_version in batch:
            result = orjson.loads(decompress(bytes(stored)))
            valid_from = result.get("ruleset", {}).get("valid_from", ruleset_version)
            verdict = result.get("verdict", verdict)
            values.append({"id": row_id, "verdict": verdict, "valid_from": dt.date.fromisoformat(valid_from)})
        connection.execute(update, values)
        after = batch[-1][0]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        placeholders = {"original_verdict": sa.text("'risky'"), "ruleset_valid_from": sa.text("'1970-01-01'")}
        op.add_column(
            "classification",
            sa.Column(
                "original_verdict",
                sa.String(length=16),
                nullable=False,
                server_default=placeholders["original_verdict"],
            ),
        )
        op.add_column(
            "classification",
            sa.Column(
                "ruleset_valid_from", sa.Date(), nullable=False, server_default=placeholders["ruleset_valid_from"]
            ),
        )
        _fill()
        return
    op.add_column("classification", sa.Column("original_verdict", sa.String(length=16), nullable=True))
    op.add_column("classification", sa.Column("ruleset_valid_from", sa.Date(), nullable=True))
    _fill()
    op.alter_column("classification", "original_verdict", existing_type=sa.String(length=16), nullable=False)
    op.alter_column("classification", "ruleset_valid_from", existing_type=sa.Date(), nullable=False)


def downgrade() -> None:
    op.drop_column("classification", "ruleset_valid_from")
    op.drop_column("classification", "original_verdict")
