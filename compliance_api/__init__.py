"""compliance-api: compliance checks for freelancer engagements."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("compliance-api")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

CONTRACT_VERSION = "2026-11-28"
