"""The passport's domain objects as the API's schemas, and the signed summary a verifier gets."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import orjson

from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport.cache import LatestCache
from compliance_api.passport.catalogue import Catalogue
from compliance_api.passport.models import PassportShare
from compliance_api.passport.reader import Row
from compliance_api.passport.schemas import (
    OwnPassport,
    PassportSummary,
    Share,
    ShareCreated,
    ShareView,
    Verification,
)
from compliance_api.passport.service import CreatedShare, Standing, VerifiedShare, Viewing
from compliance_api.passport.signing import SigningKeys, sign_with


def own_passport(standing: Standing, catalogue: Catalogue) -> OwnPassport:
    return OwnPassport(
        compliance_score=standing.score,
        compliance_level=standing.level,
        sector=standing.sector,
        verified=standing.verified,
        last_updated=standing.updated_at,
        freelancer_id=standing.freelancer_id,
        livemode=standing.environment is Environment.live,
        verifications=[
            Verification(
                check=check,
                name=catalogue.check(check).name,
                verified_on=verified_on,
                expires_on=expires_on,
                evidence_ref=evidence_ref,
                valid=check in standing.valid,
            )
            for check, verified_on, expires_on, evidence_ref in standing.verifications
        ],
    )


def own_passport_body(rows: Sequence[Row], catalogue: Catalogue, today: dt.date, cache: LatestCache[bytes]) -> bytes:
    """The hot route's answer from its one read (`service.own_passport_rows`), as its JSON body: built again only
    when a row or the day changes."""
    inputs = (today, *rows)
    freelancer_id = rows[0][0]
    body = cache.get(freelancer_id, inputs)
    if body is None:
        body = own_passport(service.standing_of_rows(catalogue, today, rows), catalogue).model_dump_json().encode()
        cache.put(freelancer_id, inputs, body)
    return body


def share(share: PassportShare, now: dt.datetime) -> Share:
    return Share(
        id=share.id,
        last4=share.last4,
        created_at=share.created_at,
        expires_at=share.expires_at,
        revoked_at=share.revoked_at,
        status=share.status(now),
        livemode=share.environment is Environment.live,
    )


def share_created(created: CreatedShare, now: dt.datetime) -> ShareCreated:
    return ShareCreated(**share(created.share, now).model_dump(), token=created.token)


def viewing(seen: Viewing) -> ShareView:
    return ShareView(
        viewed_at=seen.viewed_at,
        viewer_id=seen.viewer_id,
        viewer_email=seen.viewer_email,
        livemode=seen.environment is Environment.live,
    )


def summary_payload(summary: PassportSummary) -> bytes:
    """The signed bytes: the summary without its signature, as compact JSON with sorted keys."""
    fields = summary.model_dump(mode="json", exclude={"jws_signature"})
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def _summary(verified: VerifiedShare, catalogue: Catalogue) -> PassportSummary:
    """The unsigned summary: it ends when the share or the first counted verification does."""
    ends = [verified.share_expires_at] + [
        dt.datetime.combine(expires_on + dt.timedelta(days=1), dt.time(), dt.UTC)
        for _, expires_on in verified.counted
        if expires_on
    ]
    return PassportSummary(
        freelancer_id=verified.freelancer_id,
        issued_at=verified.issued_at,
        expires_at=min(ends),
        compliance_score=catalogue.score({check for check, _ in verified.counted}),
        verifications=[check for check, _ in verified.counted],
        livemode=verified.environment is Environment.live,
        jws_signature="",
    )


def signed_summary_body(
    verified: VerifiedShare, catalogue: Catalogue, keys: SigningKeys, cache: LatestCache[bytes]
) -> bytes:
    """The summary signed as a compact JWS, as its JSON body; signed again only when what it says (or the second of
    `issued_at`, or the signing key) changes."""
    key = keys.signing_key(verified.environment)
    inputs = (key.kid, verified.issued_at, verified.freelancer_id, verified.share_expires_at, *verified.counted)
    body = cache.get(verified.share_id, inputs)
    if body is None:
        unsigned = _summary(verified, catalogue)
        signed = unsigned.model_copy(update={"jws_signature": sign_with(key, summary_payload(unsigned))})
        body = signed.model_dump_json().encode()
        cache.put(verified.share_id, inputs, body)
    return body
