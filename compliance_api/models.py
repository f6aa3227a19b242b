"""Imports every domain's models so that Alembic sees the whole schema; defines nothing."""

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.classify.models import Classification
from compliance_api.db import Base

__all__ = ["ApiToken", "Base", "Classification", "User"]
