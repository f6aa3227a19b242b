"""Queries live in one place per domain, read from the source with `ast`: no module outside a domain's `queries.py`
(and the few files below that are themselves data access) builds a SQLAlchemy statement, runs one on a session or
connection, or holds a textual SQL string. Services keep the rules and call their domain's queries; commands call
services."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "compliance_api"

ALLOWED = {
    "db.py": "the engines and connections themselves: connect-time PRAGMAs and settings, and the hot readers' own",
    "kit/environment.py": "a building block of every query: `scoped` narrows a SELECT to one environment, "
    "`owned_elsewhere` finds an id in the other one",
    "kit/pagination.py": "a building block that is data access: the keyset page of any domain's query",
    "kit/batch_writer.py": "a building block that is data access: buffered rows inserted in batches",
    "kit/pg_listen.py": "a building block that is data access: PostgreSQL LISTEN on a connection of its own",
}
"""Files outside `*/queries.py`, `models.py` (table definitions) and `migrations/` that may hold statements, each with
the reason."""

BUILDERS = frozenset(
    {
        "select",
        "insert",
        "update",
        "delete",
        "text",
        "func",
        "exists",
        "union",
        "union_all",
        "literal",
        "literal_column",
        "bindparam",
        "tuple_",
        "and_",
        "or_",
        "not_",
        "case",
        "cast",
        "type_coerce",
        "aliased",
        "column",
        "table",
        "values",
        "lambda_stmt",
        "true",
        "false",
        "null",
        "distinct",
        "outerjoin",
        "join",
    }
)
"""SQLAlchemy's statement and expression builders, wherever they are imported from (`sqlalchemy`, `sqlalchemy.sql`,
`sqlalchemy.orm`, a dialect's `insert`)."""

SESSION_TYPES = frozenset({"Session", "AsyncSession", "Connection", "AsyncConnection", "scoped_session"})
RUNS = frozenset(
    {"execute", "scalar", "scalars", "get", "add", "add_all", "delete", "merge", "stream", "stream_scalars"}
)
"""What runs a statement (or stages a row) on a session or connection."""

SESSION_NAME = re.compile(r"(^|_)(session|conn|connection)$")
"""A receiver named like a session or connection, typed or not (`session`, `self._session`, `conn`)."""

CLAUSES = frozenset(
    {
        "where",
        "filter",
        "filter_by",
        "order_by",
        "group_by",
        "having",
        "returning",
        "select_from",
        "with_for_update",
        "on_conflict_do_nothing",
        "on_conflict_do_update",
        "execution_options",
    }
)
"""Methods that extend a statement built elsewhere."""

SQL = re.compile(
    r"^\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS|CREATE|DROP|ALTER|PRAGMA|"
    r"LISTEN|UNLISTEN|NOTIFY|TRUNCATE|SET\s+(LOCAL\s+)?\w+\s*(=|TO)|VACUUM|LOCK\s+TABLE)\b"
)
"""A string that is SQL: it starts with a statement's keyword, in capitals."""


def _allowed(relative: Path) -> bool:
    return (
        relative.name in {"queries.py", "models.py"}
        or relative.parts[0] == "migrations"
        or relative.as_posix() in ALLOWED
    )


def _is_sqlalchemy(module: str) -> bool:
    return module == "sqlalchemy" or module.startswith("sqlalchemy.")


def _names_a_session(node: ast.expr | None) -> bool:
    """Whether an annotation is a session or connection type (`AsyncSession`, `"Connection"`, `Session | None`,
    `Optional[AsyncConnection]`, `sa.orm.Session`), not a container of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _names_a_session(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names_a_session(node.left) or _names_a_session(node.right)
    if isinstance(node, ast.Subscript) and _receiver(node.value) == "Optional":
        return _names_a_session(node.slice)
    return _receiver(node) in SESSION_TYPES if node is not None else False


def _receiver(node: ast.expr) -> str | None:
    """The name a method is called on: `session` for `session.execute`, `_session` for `self._session.execute`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@dataclass
class _Reader(ast.NodeVisitor):
    """Collects a module's statements, as `line: what` strings."""

    found: list[str] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)
    """Names bound to a SQLAlchemy module (`import sqlalchemy as sa`, `from sqlalchemy import sql`)."""
    session_names: set[str] = field(default_factory=set)
    """Names annotated with a session or connection type."""
    docstrings: set[int] = field(default_factory=set)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _is_sqlalchemy(alias.name):
                self.modules.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module and _is_sqlalchemy(node.module):
            for alias in node.names:
                if alias.name in BUILDERS:
                    self.found.append(f"{node.lineno}: imports {alias.name} from {node.module}")
                elif _is_sqlalchemy(f"{node.module}.{alias.name}") and alias.name.islower():
                    self.modules.add(alias.asname or alias.name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in BUILDERS and self._is_module(node.value):
            self.found.append(f"{node.lineno}: {ast.unparse(node)}")
        self.generic_visit(node)

    def _is_module(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.modules
        return isinstance(node, ast.Attribute) and self._is_module(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        if isinstance(function, ast.Attribute):
            receiver = _receiver(function.value)
            on_session = receiver is not None and (
                receiver in self.session_names or SESSION_NAME.search(receiver) is not None
            )
            if function.attr in RUNS and on_session:
                self.found.append(f"{node.lineno}: {receiver}.{function.attr}(…)")
            elif function.attr in CLAUSES and not on_session:
                self.found.append(f"{node.lineno}: .{function.attr}(…)")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            self.docstrings.add(id(node.value))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings and SQL.match(node.value):
            self.found.append(f"{node.lineno}: SQL {node.value[:40]!r}")


def statements(source: str) -> list[str]:
    """Every SQLAlchemy statement construct, run and SQL string in `source`."""
    tree = ast.parse(source)
    reader = _Reader()
    for node in ast.walk(tree):  # imports and annotations first: a name may be used before its import's line
        if isinstance(node, ast.Import | ast.ImportFrom):
            reader.visit(node)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            if _names_a_session(node.annotation):
                target = node.arg if isinstance(node, ast.arg) else _receiver(node.target)
                if target:
                    reader.session_names.add(target)
    reader.found.clear()
    reader.visit(tree)
    return sorted(set(reader.found), key=lambda line: int(line.split(":")[0]))


def _modules() -> Iterator[tuple[Path, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, path.relative_to(PACKAGE)


def test_statements_live_in_queries_modules() -> None:
    outside = {
        relative.as_posix(): found
        for path, relative in _modules()
        if not _allowed(relative) and (found := statements(path.read_text(encoding="utf-8")))
    }
    assert outside == {}


def test_every_allowed_file_exists_and_holds_statements() -> None:
    """An allowance outlives nothing: each named file is there and still needs it."""
    empty = [name for name in ALLOWED if not statements((PACKAGE / name).read_text(encoding="utf-8"))]
    assert empty == []


def test_the_reader_sees_every_form_of_statement() -> None:
    """Builders however imported (aliased, from `sqlalchemy.sql`, a dialect, a module alias), runs on a session or
    connection named or typed as one, clauses added to a statement built elsewhere, and SQL in a string; not a
    docstring, a dict's `get`, or a session's `commit`."""
    source = '''
"""SELECT in a docstring is prose."""
import sqlalchemy as sa
from sqlalchemy import select as s
from sqlalchemy.sql import expression
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

async def f(db: "AsyncSession", other: AsyncConnection | None, statement, cache: dict):
    sa.func.count()
    expression.update(Table)
    await db.scalars(statement)
    await other.execute(statement)
    statement.where(True)
    await session.commit()
    cache.get("key")
    return "DELETE FROM users"
'''
    found = [line.split(": ", 1)[1] for line in statements(source)]
    assert found == [
        "imports select from sqlalchemy",
        "imports insert from sqlalchemy.dialects.postgresql",
        "sa.func",
        "expression.update",
        "db.scalars(…)",
        "other.execute(…)",
        ".where(…)",
        "SQL 'DELETE FROM users'",
    ]
