"""`/freelancer/usage`: requests per day over the last 30 days per environment and per token, the share answered
429, drawn as server-rendered SVG bar charts beside the rate limits of the account's plan."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from compliance_api.dashboard.charts import BarChart, Column, bar_chart
from compliance_api.dashboard.i18n import N_, Translator, sentence
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import CurrentAccount, render, translator_of
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import Tier, tier_for
from compliance_api.requestlog import service
from compliance_api.sessions import DbSession

router = APIRouter()


@dataclass(frozen=True, slots=True)
class EnvironmentUsage:
    environment: Environment
    usage: service.Usage
    tier: Tier
    chart: BarChart
    token_charts: tuple[tuple[service.TokenUsage, BarChart], ...]


def _columns(days: tuple[service.DayCount, ...], translator: Translator) -> list[Column]:
    return [Column(translator.day(d.day), d.requests, d.rate_limited) for d in days]


def _description(what: str, usage_days: tuple[service.DayCount, ...], translator: Translator) -> str:
    total = sum(d.requests for d in usage_days)
    limited = sum(d.rate_limited for d in usage_days)
    busiest = max(usage_days, key=lambda d: d.requests)
    if not total:
        return translator.gettext("%(what)s: no requests in the last 30 days.", what=what)
    return translator.ngettext(
        "%(what)s: %(total)s request in the last 30 days, %(limited)s of them answered 429; the busiest day was "
        "%(busiest)s with %(busiest_requests)s. The table below the chart lists every day.",
        "%(what)s: %(total)s requests in the last 30 days, %(limited)s of them answered 429; the busiest day was "
        "%(busiest)s with %(busiest_requests)s. The table below the chart lists every day.",
        total,
        what=what,
        total=translator.number(total),
        limited=translator.number(limited),
        busiest=busiest.day.isoformat(),
        busiest_requests=translator.number(busiest.requests),
    )


def _for(environment: Environment, usage: service.Usage, tier: Tier, translator: Translator) -> EnvironmentUsage:
    label = translator.text(environment.label)
    chart = bar_chart(
        f"usage-{environment.value}",
        sentence(translator.gettext("%(environment)s requests per day", environment=label)),
        _description(
            sentence(translator.gettext("%(environment)s, all tokens", environment=label)), usage.days, translator
        ),
        _columns(usage.days, translator),
    )
    token_charts = tuple(
        (
            token,
            bar_chart(
                f"usage-{environment.value}-{token.token_id or 'dashboard'}",
                translator.gettext(
                    "%(token)s (…%(last4)s) requests per day",
                    token=token.name or translator.gettext("Deleted token"),
                    last4=token.last4,
                ),
                _description(
                    translator.gettext(
                        "Token %(token)s …%(last4)s",
                        token=token.name or translator.gettext("deleted"),
                        last4=token.last4,
                    ),
                    token.days,
                    translator,
                ),
                _columns(token.days, translator),
                height=120,
            ),
        )
        for token in usage.tokens
    )
    return EnvironmentUsage(environment, usage, tier, chart, token_charts)


@router.get("/usage", include_in_schema=False)
async def usage_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    now = utcnow()
    sections = []
    for environment in Environment:
        usage = await service.usage(session, service.LogOwner(account.id, environment), now)
        sections.append(_for(environment, usage, tier_for(account.plan, environment), translator_of(request)))
    return render(request, "usage/page.html", account=account, sections=sections)


PAGE = DashboardPage(router, NavItem(N_("Usage"), "/usage", order=85))
