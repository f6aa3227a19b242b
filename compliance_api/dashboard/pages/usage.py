"""`/freelancer/usage`: requests per day over the last 30 days per environment and per token, the share answered
429, drawn as server-rendered SVG bar charts beside the rate limits of the account's plan."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from compliance_api.dashboard.charts import BarChart, Column, bar_chart
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import CurrentAccount, render
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


def _columns(days: tuple[service.DayCount, ...]) -> list[Column]:
    return [Column(d.day.strftime("%d %b"), d.requests, d.rate_limited) for d in days]


def _description(what: str, usage_days: tuple[service.DayCount, ...]) -> str:
    total = sum(d.requests for d in usage_days)
    limited = sum(d.rate_limited for d in usage_days)
    busiest = max(usage_days, key=lambda d: d.requests)
    if not total:
        return f"{what}: no requests in the last 30 days."
    return (
        f"{what}: {total} requests in the last 30 days, {limited} of them answered 429; the busiest day was "
        f"{busiest.day.isoformat()} with {busiest.requests}. The table below the chart lists every day."
    )


def _for(environment: Environment, usage: service.Usage, tier: Tier) -> EnvironmentUsage:
    label = environment.label.capitalize()
    chart = bar_chart(
        f"usage-{environment.value}",
        f"{label} requests per day",
        _description(f"{label}, all tokens", usage.days),
        _columns(usage.days),
    )
    token_charts = tuple(
        (
            token,
            bar_chart(
                f"usage-{environment.value}-{token.token_id}",
                f"{token.name or 'Deleted token'} (…{token.last4}) requests per day",
                _description(f"Token {token.name or 'deleted'} …{token.last4}", token.days),
                _columns(token.days),
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
        usage = await service.usage(session, service.Owner(account.id, environment), now)
        sections.append(_for(environment, usage, tier_for(account.plan, environment)))
    return render(request, "usage/page.html", account=account, sections=sections)


PAGE = DashboardPage(router, NavItem("Usage", "/usage", order=85))
