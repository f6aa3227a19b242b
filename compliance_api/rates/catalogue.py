"""The published catalogue: which sector slugs and region codes rate observations and benchmarks may use."""

from __future__ import annotations

from types import MappingProxyType

NATIONAL = "NL"

SECTORS: MappingProxyType[str, str] = MappingProxyType(
    {
        "accounting": "Accountants and bookkeepers",
        "agriculture": "Agriculture",
        "business-services": "Business services and consultancy",
        "coaching-training": "Coaches and trainers",
        "communications": "Communications",
        "construction": "Construction (contractors)",
        "cooking": "Cooks",
        "copywriting": "Copywriters",
        "education": "Teachers",
        "financial-advice": "Financial advisers",
        "financial-sector": "Financial-sector professionals",
        "gardening": "Gardeners",
        "government": "Work for government clients",
        "hospitality": "Hospitality (horeca)",
        "hr": "Human resources",
        "ict": "ICT",
        "ict-consulting": "ICT consultants",
        "interim-management": "Interim managers",
        "legal": "Legal (jurists)",
        "mechanics": "Mechanics",
        "nursing": "Nurses",
        "painting": "Painters",
        "psychology": "Psychologists",
        "security": "Security guards",
        "system-administration": "System administrators",
    }
)
"""Sector slug → label. Every slug has a published mean in `reference/nl_rate_publications.csv`."""

PROVINCES: MappingProxyType[str, str] = MappingProxyType(
    {
        "NL-DR": "Drenthe",
        "NL-FL": "Flevoland",
        "NL-FR": "Fryslân",
        "NL-GE": "Gelderland",
        "NL-GR": "Groningen",
        "NL-LI": "Limburg",
        "NL-NB": "Noord-Brabant",
        "NL-NH": "Noord-Holland",
        "NL-OV": "Overijssel",
        "NL-UT": "Utrecht",
        "NL-ZE": "Zeeland",
        "NL-ZH": "Zuid-Holland",
    }
)
"""ISO 3166-2:NL province codes → names."""

REGIONS: tuple[str, ...] = (NATIONAL, *PROVINCES)
"""`NL` (the whole country: every observation of the sector) and the twelve provinces."""
