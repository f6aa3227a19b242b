"""The reporting platform operator's nexus, apart so the CLI names it without loading the database layer."""

from __future__ import annotations

from enum import StrEnum


class Nexus(StrEnum):
    """DPI's `Nexus_EnumType` (Directive 2021/514, Annex V, Section I A(4))."""

    RPONEX1 = "RPONEX1"  # resident for tax purposes in a member state
    RPONEX2 = "RPONEX2"  # incorporated under the laws of a member state
    RPONEX3 = "RPONEX3"  # place of management in a member state
    RPONEX4 = "RPONEX4"  # permanent establishment in a member state
    RPONEX5 = "RPONEX5"  # none of these: a non-Union platform operator
