"""compressed verdicts: `classification.result`, `classification.request` and `classification_verdict.result` as zstd
frames (with the packaged verdict dictionary) of the JSON text stored before, byte for byte

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 10:00:00

The JSON text each row held is exactly the answer as first given (the app wrote both with orjson), so it is compressed
as it is, never parsed and written again. Rows are converted a thousand at a time, in id order.
"""

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from compliance_api.classify.compression import compress, decompress

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (("classification", "result"), ("classification", "request"), ("classification_verdict", "result"))
BATCH = 1000


def _convert(table: str, column: str, change: Callable[[bytes], bytes | str], *, to_json: bool) -> None:
    """Fill `{column}_new` with `change` of the bytes `column` holds, for every row."""
    connection = op.get_bind()
    postgresql = connection.dialect.name == "postgresql"
    # Table and column names are this migration's own constants; every value is bound.
    read_as = f"CAST({column} AS TEXT)" if postgresql and not to_json else column
    write_as = "CAST(:value AS JSON)" if postgresql and to_json else ":value"
    select = sa.text(f"SELECT id, {read_as} FROM {table} WHERE id > :after ORDER BY id LIMIT {BATCH}")  # noqa: S608
    first = sa.text(f"SELECT id, {read_as} FROM {table} ORDER BY id LIMIT {BATCH}")  # noqa: S608
    update = sa.text(f"UPDATE {table} SET {column}_new = {write_as} WHERE id = :id")  # noqa: S608
    after = None
    while True:
        rows = connection.execute(first if after is None else select, {} if after is None else {"after": after}).all()
        if not rows:
            return
        connection.execute(
            update,
            [
                {"id": row[0], "value": change(row[1].encode() if isinstance(row[1], str) else bytes(row[1]))}
                for row in rows
            ],
        )
        after = rows[-1][0]


def _replace(
    table: str, column: str, new_type: sa.types.TypeEngine[Any], change: Callable[[bytes], bytes | str]
) -> None:
    """`column` becomes a column of `new_type` holding `change` of what it held.

    On SQLite without rebuilding the table (no batch mode): the migration runs with foreign keys on, and rebuilding a
    table drops the old one, whose implicit delete would cascade to `classification_verdict`. SQLite adds a NOT NULL
    column only with a default, so the new column gets an empty one, never used (every row is filled)."""
    sqlite = op.get_bind().dialect.name == "sqlite"
    empty = sa.text("x''") if isinstance(new_type, sa.LargeBinary) else sa.text("'{}'")
    new = f"{column}_new"
    op.add_column(table, sa.Column(new, new_type, nullable=not sqlite, server_default=empty if sqlite else None))
    _convert(table, column, change, to_json=isinstance(new_type, sa.JSON))
    op.drop_column(table, column)
    if sqlite:  # already NOT NULL
        op.alter_column(table, new, new_column_name=column)
    else:
        op.alter_column(table, new, new_column_name=column, existing_type=new_type, nullable=False)


def upgrade() -> None:
    for table, column in COLUMNS:
        _replace(table, column, sa.LargeBinary(), compress)


def downgrade() -> None:
    for table, column in COLUMNS:
        _replace(table, column, sa.JSON(), lambda stored: decompress(stored).decode())
