"""Imports every domain's models so that Alembic sees the whole schema; defines nothing."""

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.db import Base
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation

__all__ = ["ApiToken", "Base", "RateBenchmark", "RateImport", "RateObservation", "User"]
