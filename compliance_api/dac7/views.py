"""DAC7 domain objects as the API's schemas."""

from __future__ import annotations

from compliance_api.dac7.figures import euros
from compliance_api.dac7.models import Dac7Grant
from compliance_api.dac7.schemas import Dac7SellerOut, Grant, GrantList
from compliance_api.dac7.service import SellerSnapshot
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Paged


def seller(snapshot: SellerSnapshot) -> Dac7SellerOut:
    total = snapshot.figures.total()
    return Dac7SellerOut(
        freelancer_id=snapshot.seller.user_id,
        reporting_year=snapshot.year,
        tin=snapshot.seller.tin,
        member_state=snapshot.seller.member_state,
        total_consideration_eur=euros(total.consideration_cents),
        number_of_activities=total.count,
        reported_at=snapshot.reported_at,
        fees_eur=euros(total.fees_cents),
        taxes_eur=euros(total.taxes_cents),
        reportable=snapshot.figures.reportable,
        livemode=snapshot.seller.environment is Environment.live,
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


def grant_list(page: Paged[Dac7Grant]) -> GrantList:
    return GrantList(data=[grant(g) for g in page.rows], has_more=page.has_more, next_cursor=page.next_cursor)
