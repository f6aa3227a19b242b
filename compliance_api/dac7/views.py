"""DAC7 domain objects as the API's schemas."""

from __future__ import annotations

from compliance_api.dac7.figures import euros
from compliance_api.dac7.identity import SellerIdentity
from compliance_api.dac7.models import Dac7Grant, Dac7Seller
from compliance_api.dac7.schemas import Dac7IdentityOut, Dac7SellerOut, Grant
from compliance_api.dac7.service import SellerSnapshot
from compliance_api.kit.environment import Environment


def seller(snapshot: SellerSnapshot) -> Dac7SellerOut:
    total = snapshot.figures.total()
    return Dac7SellerOut(
        freelancer_id=snapshot.seller.user_id,
        reporting_year=snapshot.year,
        tin=_first_tin(snapshot.identity),
        member_state=snapshot.seller.member_state,
        total_consideration_eur=euros(total.consideration_cents),
        number_of_activities=total.count,
        reported_at=snapshot.reported_at,
        fees_eur=euros(total.fees_cents),
        taxes_eur=euros(total.taxes_cents),
        reportable=snapshot.figures.reportable,
        livemode=snapshot.seller.environment is Environment.live,
    )


def _first_tin(identity: SellerIdentity | None) -> str:
    """The first TIN recorded; empty when the seller has none (a documented absence, or wiped after retention)."""
    return identity.tins[0].tin if identity is not None and identity.tins else ""


def identity(seller: Dac7Seller, held: SellerIdentity | None) -> Dac7IdentityOut:
    """What is held; a wiped identity (past retention) reads as an empty one, lacking everything."""
    shown = held or SellerIdentity(kind="entity" if seller.kind == "entity" else "individual")
    lacking = ["identity"] if held is None else held.missing()
    return Dac7IdentityOut(
        **shown.model_dump(),
        freelancer_id=seller.user_id,
        residence=seller.member_state,
        complete=not lacking,
        lacking=lacking,
        updated_at=seller.updated_at,
        livemode=seller.environment is Environment.live,
    )


def grant(found: Dac7Grant) -> Grant:
    return Grant(
        id=found.id,
        grantee_id=found.grantee_user_id,
        created_at=found.created_at,
        revoked_at=found.revoked_at,
        status=found.status,
        livemode=found.environment is Environment.live,
    )
