"""TINs are checked per member state with python-stdnum; a refusal names the rule."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.dac7 import service
from compliance_api.dac7.tin import GENERIC_ONLY, MEMBER_STATES, TIN_MODULES, InvalidTin, check_tin
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import TEST_BOX
from tests.factories import create_user

VALID = {
    "NL": "111222333",  # BSN
    "BE": "85.07.30-033.28",  # national number
    "DE": "36 574 261 809",  # IdNr
    "FR": "30 23 217 600 053",  # NIF
    "AT": "59-119/9013",
    "ES": "54362315K",
    "IT": "RCCMNL83S18D969H",
    "PL": "44051401359",
    "PT": "501 964 843",
    "SE": "880320-0016",
}


@pytest.mark.parametrize(("state", "tin"), sorted(VALID.items()))
def test_valid_tins_are_accepted_in_compact_form(state: str, tin: str) -> None:
    checked = check_tin(tin, state)
    assert checked.member_state == state
    assert " " not in checked.tin
    assert checked.rule.startswith("stdnum.")


@pytest.mark.parametrize(
    ("state", "tin", "rule"),
    [
        ("NL", "111222334", "stdnum.nl.bsn"),
        ("BE", "85073003329", "stdnum.be.nn"),
        ("DE", "36574261808", "stdnum.de.idnr"),
        ("FR", "3023217600054", "stdnum.fr.nif"),
        ("NL", "12345678A", "stdnum.nl.bsn"),
    ],
)
def test_an_invalid_tin_is_refused_naming_the_rule(state: str, tin: str, rule: str) -> None:
    with pytest.raises(InvalidTin, match=rule):
        check_tin(tin, state)


def test_a_tin_valid_in_one_state_is_refused_in_another() -> None:
    check_tin(VALID["NL"], "NL")
    with pytest.raises(InvalidTin, match="not a valid DE TIN"):
        check_tin(VALID["NL"], "DE")


def test_every_member_state_has_a_rule_and_only_member_states_are_taken() -> None:
    assert len(MEMBER_STATES) == 27
    assert set(TIN_MODULES) | set(GENERIC_ONLY) == set(MEMBER_STATES)
    with pytest.raises(InvalidTin, match="not an EU member state"):
        check_tin("123456789", "US")
    assert check_tin("12345678 x", "lu").tin == "12345678X"
    with pytest.raises(InvalidTin, match="generic rule for MT"):
        check_tin("!", "MT")


async def test_recording_a_seller_refuses_a_bad_tin_and_a_business(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    freelancer = await create_user(sessionmaker, kind=UserKind.freelancer)
    business = await create_user(sessionmaker, kind=UserKind.business)
    async with sessionmaker.begin() as session:
        with pytest.raises(InvalidTin):
            await service.record_seller(
                session, freelancer, Environment.live, tin="111222334", member_state="NL", box=TEST_BOX, now=utcnow()
            )
        with pytest.raises(service.Dac7Error, match="only freelancers"):
            await service.record_seller(
                session, business, Environment.live, tin=VALID["NL"], member_state="NL", box=TEST_BOX, now=utcnow()
            )
        recorded = await service.record_seller(
            session, freelancer, Environment.live, tin="1112.22.333", member_state="nl", box=TEST_BOX, now=utcnow()
        )
        held = service.identity_of(recorded, TEST_BOX)
        assert held is not None
        assert (held.tins[0].tin, recorded.member_state, held.tins[0].rule) == ("111222333", "NL", "stdnum.nl.bsn")
        again = await service.record_seller(
            session, freelancer, Environment.live, tin=VALID["DE"], member_state="DE", box=TEST_BOX, now=utcnow()
        )
        assert again.id == recorded.id, "a second call replaces the TIN"
        assert await service.seller_of(session, freelancer.id, Environment.test) is None
