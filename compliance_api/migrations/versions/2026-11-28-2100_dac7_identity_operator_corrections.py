"""dac7: the operator's identity, sellers' identities sealed at rest (the plain TIN column goes), report records for
corrections and deletions

Each existing seller's TIN is sealed into its identity document (a TIN only: the export names what else it lacks)
under a key derived from COMPLIANCE_SECRET_KEY, the same key the service uses (compliance_api/dac7/sealing.py).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from compliance_api.config import Settings
from compliance_api.dac7.identity import Dac7Tin, SellerIdentity
from compliance_api.dac7.sealing import identity_box

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENVIRONMENT = sa.Enum("live", "test", name="environment", native_enum=False, length=16)


def upgrade() -> None:
    op.create_table(
        "dac7_operator",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("tin", sa.String(length=200), nullable=False),
        sa.Column("tin_issued_by", sa.String(length=2), nullable=False),
        sa.Column("country", sa.String(length=2), nullable=False),
        sa.Column("nexus", sa.String(length=8), nullable=False),
        sa.Column("vat", sa.String(length=200), nullable=True),
        sa.Column("address_country", sa.String(length=2), nullable=False),
        sa.Column("street", sa.String(length=200), nullable=True),
        sa.Column("building", sa.String(length=200), nullable=True),
        sa.Column("post_code", sa.String(length=200), nullable=True),
        sa.Column("city", sa.String(length=200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("environment", ENVIRONMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dac7_operator")),
        sa.UniqueConstraint("environment", name="uq_dac7_operator_environment"),
    )
    with op.batch_alter_table("dac7_operator", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dac7_operator_environment"), ["environment"], unique=False)
    with op.batch_alter_table("dac7_seller", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=16), nullable=False, server_default="individual"))
        batch_op.add_column(sa.Column("identity_sealed", sa.LargeBinary(), nullable=True))
    _seal_existing_tins()
    with op.batch_alter_table("dac7_seller", schema=None) as batch_op:
        batch_op.drop_column("tin")
        batch_op.drop_column("tin_rule")
    with op.batch_alter_table("dac7_report", schema=None) as batch_op:
        batch_op.add_column(sa.Column("doc_ref_id", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("digest", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("exported_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))


def _seal_existing_tins() -> None:
    bind = op.get_bind()
    sellers = sa.table(
        "dac7_seller",
        sa.column("id", sa.Uuid()),
        sa.column("tin", sa.String()),
        sa.column("member_state", sa.String()),
        sa.column("identity_sealed", sa.LargeBinary()),
    )
    rows = bind.execute(sa.select(sellers.c.id, sellers.c.tin, sellers.c.member_state)).all()
    if not rows:
        return
    box = identity_box(Settings())
    for seller_id, tin, member_state in rows:
        identity = SellerIdentity(tins=[Dac7Tin(tin=tin, issued_by=member_state)])
        bind.execute(
            sellers.update().where(sellers.c.id == seller_id).values(identity_sealed=box.seal(identity, seller_id))
        )


def downgrade() -> None:
    with op.batch_alter_table("dac7_report", schema=None) as batch_op:
        for column in ("deleted_at", "withdrawn_at", "exported_at", "digest", "doc_ref_id"):
            batch_op.drop_column(column)
    with op.batch_alter_table("dac7_seller", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tin", sa.String(length=32), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("tin_rule", sa.String(length=64), nullable=False, server_default=""))
        batch_op.drop_column("identity_sealed")
        batch_op.drop_column("kind")
    with op.batch_alter_table("dac7_operator", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dac7_operator_environment"))
    op.drop_table("dac7_operator")
