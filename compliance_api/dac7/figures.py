"""Per-quarter DAC7 figures of sellers, summed in SQL from their activities; and who is reportable.

Consideration is net (DAC7 Annex V): what was paid or credited, less the fees, commissions and taxes withheld.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.dac7 import queries
from compliance_api.dac7.models import ActivityType

GOODS_MIN_ACTIVITIES = 30
GOODS_MAX_CONSIDERATION_CENTS = 2_000_00
QUARTERS = (1, 2, 3, 4)
CHUNK = 1000  # ids per IN list (PostgreSQL takes at most 32767 parameters)


@dataclass(slots=True)
class Bucket:
    """One quarter of one activity type: count and amounts in cents (consideration net)."""

    count: int = 0
    consideration_cents: int = 0
    fees_cents: int = 0
    taxes_cents: int = 0

    def add(self, other: Bucket) -> None:
        self.count += other.count
        self.consideration_cents += other.consideration_cents
        self.fees_cents += other.fees_cents
        self.taxes_cents += other.taxes_cents


@dataclass(slots=True)
class YearFigures:
    """A seller's year: buckets per (activity type, quarter)."""

    buckets: dict[tuple[ActivityType, int], Bucket] = field(default_factory=dict)

    def bucket(self, activity_type: ActivityType, quarter: int) -> Bucket:
        return self.buckets.get((activity_type, quarter), Bucket())

    def total(self, activity_type: ActivityType | None = None) -> Bucket:
        result = Bucket()
        for (kind, _), bucket in self.buckets.items():
            if activity_type is None or kind is activity_type:
                result.add(bucket)
        return result

    @property
    def reportable(self) -> bool:
        """Excluded only when selling goods alone, below 30 sales and at most EUR 2,000 (Annex V)."""
        if not self.buckets:
            return False
        if self.total(ActivityType.personal_services).count:
            return True
        goods = self.total(ActivityType.sale_of_goods)
        return goods.count >= GOODS_MIN_ACTIVITIES or goods.consideration_cents > GOODS_MAX_CONSIDERATION_CENTS

    def as_payload(self) -> dict[str, object]:
        """Totals for an event: exact decimal strings in EUR."""
        total = self.total()
        return {
            "currency": "EUR",
            "total_consideration_eur": str(euros(total.consideration_cents)),
            "fees_eur": str(euros(total.fees_cents)),
            "taxes_eur": str(euros(total.taxes_cents)),
            "number_of_activities": total.count,
            "reportable": self.reportable,
        }


def euros(cents: int) -> Decimal:
    return (Decimal(cents) / 100).quantize(Decimal("0.01"))


async def year_figures(
    session: AsyncSession, seller_ids: Iterable[uuid.UUID], year: int
) -> dict[uuid.UUID, YearFigures]:
    """Every given seller's figures for the year (sellers without activities get empty figures)."""
    wanted = list(dict.fromkeys(seller_ids))
    result = {seller_id: YearFigures() for seller_id in wanted}
    for start in range(0, len(wanted), CHUNK):
        await _add_figures(session, result, wanted[start : start + CHUNK], year)
    return result


async def _add_figures(
    session: AsyncSession, result: dict[uuid.UUID, YearFigures], seller_ids: list[uuid.UUID], year: int
) -> None:
    for seller_id, kind, quarter, count, net, fees, taxes in await queries.quarter_sums(session, seller_ids, year):
        result[seller_id].buckets[(kind, quarter)] = Bucket(int(count), int(net), int(fees), int(taxes))
