"""Smoke test of the generated Python client against a live server: every operation of the contract, once at least.

Run by clients/smoke.sh: `python smoke.py BASE_URL DEMO_JSON CONTRACT_JSON`, with the generated client importable.
Requests are the contract's own examples where it has them; the sandbox fixtures answer the rest.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from uuid import UUID

import httpx
from compliance_api_client import AuthenticatedClient, models
from compliance_api_client.api.classify import (
    classification_dossier,
    classification_get,
    classification_list,
    classification_update,
    classify_cross_border,
    classify_cross_border_batch,
    classify_cross_border_criteria,
    classify_questions,
    classify_zelfstandigenwet,
    classify_zelfstandigenwet_batch,
)
from compliance_api_client.api.dac7 import (
    dac7_grant_create,
    dac7_grant_list,
    dac7_grant_revoke,
    dac7_identity_get,
    dac7_identity_put,
    dac7_seller_get,
)
from compliance_api_client.api.events import event_get, event_list
from compliance_api_client.api.health import health_get
from compliance_api_client.api.passport import (
    passport_get,
    passport_get_api,
    passport_share_create,
    passport_share_list,
    passport_share_revoke,
    passport_share_views,
    passport_verify,
)
from compliance_api_client.api.rates import rates_benchmark_get, rates_sectors_get
from compliance_api_client.api.requests import request_list
from compliance_api_client.api.webhooks import (
    webhook_delivery_list,
    webhook_delivery_retry,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_get,
    webhook_endpoint_list,
    webhook_endpoint_replay,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_test,
    webhook_endpoint_update,
)
from compliance_api_client.api.wtta import wtta_history, wtta_lookup

METHODS = ("get", "post", "put", "patch", "delete")
CALLED: set[str] = set()


def call(operation: ModuleType, status: int, **kwargs: Any) -> Any:
    """Call an operation's `sync_detailed`, check the status and record the operation as covered."""
    response = operation.sync_detailed(**kwargs)
    name = operation.__name__.rsplit(".", 1)[-1]
    if response.status_code != status:
        raise AssertionError(f"{name}: expected {status}, got {response.status_code}: {response.content[:500]!r}")
    CALLED.add(name)
    return response.parsed


def request_example(contract: dict[str, Any], path: str, method: str) -> Any:
    media = contract["paths"][path][method]["requestBody"]["content"]["application/json"]
    return next(iter(media["examples"].values()))["value"]


def main(base_url: str, demo: dict[str, Any], contract: dict[str, Any]) -> None:
    servers = httpx.get(f"{base_url}/openapi.json").json()["servers"]
    sandbox = servers[1]["url"]  # the served contract names the sandbox of this deployment
    business = AuthenticatedClient(base_url=sandbox, token=demo["tokens"]["test"])
    freelancer = AuthenticatedClient(base_url=sandbox, token=demo["fixtures"]["passport"]["token"])
    production = AuthenticatedClient(base_url=servers[0]["url"], token=demo["tokens"]["live"])
    kvk = demo["fixtures"]["wtta"]

    assert call(health_get, 200, client=production).status.value in ("ok", "degraded")
    assert call(health_get, 200, client=business).status.value in ("ok", "degraded")
    problem = call(health_get, 401, client=AuthenticatedClient(base_url=sandbox, token=demo["tokens"]["live"]))
    assert problem.code.value == "wrong_environment"
    assert call(wtta_lookup, 200, client=business, kvk=kvk["admitted"]).admission_status.value == "admitted"
    assert call(wtta_lookup, 404, client=business, kvk="12345678").code.value == "not_in_cache"
    assert call(wtta_history, 200, client=business, kvk=kvk["revoked"]).changes

    dutch = models.ZelfstandigenwetRequest.from_dict(request_example(contract, "/v1/classify/zelfstandigenwet", "post"))
    verdict = call(classify_zelfstandigenwet, 200, client=business, body=dutch, idempotency_key="smoke-python-1")
    cross_border = request_example(contract, "/v1/classify/cross-border", "post")
    body = getattr(models, f"CrossBorderRequest{cross_border['country']}").from_dict(cross_border)
    call(classify_cross_border, 200, client=business, body=body, accept_language="nl")
    for operation, path, model, items in (
        (
            classify_zelfstandigenwet_batch,
            "/v1/classify/zelfstandigenwet/batch",
            models.ZelfstandigenwetBatchRequest,
            (models.ZelfstandigenwetRequest,),
        ),
        (
            classify_cross_border_batch,
            "/v1/classify/cross-border/batch",
            models.CrossBorderBatchRequest,
            (models.CrossBorderRequestFR, models.CrossBorderRequestDE, models.CrossBorderRequestBE),
        ),
    ):
        batch_body = model.from_dict(request_example(contract, path, "post"))
        assert all(isinstance(item, items) for item in batch_body.items), "typed batch items"
        batch = call(operation, 200, client=business, body=batch_body)
        assert not isinstance(batch.data[0], models.ItemProblem)  # the example's first item is answered a verdict
        assert isinstance(batch.data[1], models.ItemProblem)  # its second, a problem
        assert batch.data[1].index == 1
    call(classify_cross_border_criteria, 200, client=business, country=models.Country.BE)
    catalogue = call(classify_questions, 200, client=business, test=models.Test.NL, accept_language="fr")
    assert catalogue.questions
    assert catalogue.decisive
    listed = call(classification_list, 200, client=business, limit=5)
    assert verdict.id in [item.id for item in listed.data]
    assert call(classification_get, 200, client=business, classification_id=verdict.id).id == verdict.id
    update = models.ClassificationUpdate.from_dict(
        request_example(contract, "/v1/classifications/{classification_id}", "patch")
    )
    call(classification_update, 200, client=business, classification_id=verdict.id, body=update)
    signed = call(classification_dossier, 200, client=business, classification_id=verdict.id)
    assert signed.dossier.classification_id == verdict.id
    assert signed.jws.count(".") == 2

    call(rates_benchmark_get, 200, client=business, sector="ict", region="NL")
    assert call(rates_sectors_get, 200, client=business).sectors

    assert call(passport_get, 200, client=freelancer).verified
    call(passport_get_api, 200, client=freelancer)
    assert call(passport_get, 403, client=business).code.value == "freelancer_only"
    share = call(passport_share_create, 201, client=freelancer, body=models.ShareCreate(ttl_days=30))
    assert share.id in [item.id for item in call(passport_share_list, 200, client=freelancer).data]
    assert call(passport_verify, 200, client=business, token=share.token).compliance_score > 0
    assert call(passport_share_views, 200, client=freelancer, share_id=share.id).data
    assert call(passport_share_revoke, 200, client=freelancer, share_id=share.id).status == "revoked"
    assert call(passport_verify, 404, client=business, token=share.token).code.value == "share_not_found"

    seller = UUID(demo["fixtures"]["dac7"]["authorised_seller"])
    assert call(dac7_seller_get, 200, client=business, freelancer_id=seller).reportable
    assert call(dac7_identity_get, 200, client=freelancer, freelancer_id=seller).complete
    identity = request_example(contract, "/v1/dac7/seller/{freelancer_id}/identity", "put")  # the demo's, as found
    body = models.SellerIdentity.from_dict(identity)
    assert call(dac7_identity_put, 200, client=freelancer, freelancer_id=seller, body=body).complete
    grants = call(dac7_grant_list, 200, client=freelancer).data
    grant = call(dac7_grant_create, 201, client=freelancer, body=models.GrantCreate(grantee_id=grants[0].grantee_id))
    assert call(dac7_grant_revoke, 200, client=freelancer, grant_id=grant.id).status == "revoked"
    call(
        dac7_grant_create, 201, client=freelancer, body=models.GrantCreate(grantee_id=grants[0].grantee_id)
    )  # as found

    events = [models.EventType.CLASSIFICATION_CREATED]
    hook = models.EndpointCreate(url="http://127.0.0.1:9/smoke", enabled_events=events, description="smoke")
    endpoint = call(webhook_endpoint_create, 201, client=business, body=hook)
    assert endpoint.secret.startswith("whsec_")
    assert endpoint.id in [item.id for item in call(webhook_endpoint_list, 200, client=business).data]
    call(webhook_endpoint_get, 200, client=business, endpoint_id=endpoint.id)
    update_example = request_example(contract, "/v1/webhook-endpoints/{endpoint_id}", "patch")
    changed = models.EndpointUpdate.from_dict(update_example)
    renamed = call(webhook_endpoint_update, 200, client=business, endpoint_id=endpoint.id, body=changed)
    assert renamed.description == update_example["description"]
    call(webhook_endpoint_rotate_secret, 200, client=business, endpoint_id=endpoint.id)
    delivery = call(webhook_endpoint_test, 202, client=business, endpoint_id=endpoint.id)
    since = models.ReplayRequest(since=dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    replay = call(webhook_endpoint_replay, 202, client=business, endpoint_id=endpoint.id, body=since)
    assert replay.replayed >= 1  # the classifications above
    undelivered = models.ReplayRequest(since=since.since, mode=models.ReplayMode.UNDELIVERED)
    again = call(webhook_endpoint_replay, 202, client=business, endpoint_id=endpoint.id, body=undelivered)
    assert again.already_pending >= 1  # the replay above left them pending: not queued twice
    assert call(webhook_delivery_list, 200, client=business, endpoint_id=endpoint.id).data
    call(webhook_delivery_retry, 202, client=business, endpoint_id=endpoint.id, delivery_id=delivery.id)
    call(webhook_endpoint_delete, 204, client=business, endpoint_id=endpoint.id)

    recent = call(event_list, 200, client=business, limit=10).data
    assert call(event_get, 200, client=business, event_id=recent[0].id).id == recent[0].id
    assert isinstance(call(request_list, 200, client=business, limit=10).data, list)  # written within a second

    operations = {
        operation["operationId"].replace("-", "_")
        for item in contract["paths"].values()
        for method, operation in item.items()
        if method in METHODS
    }
    missing = sorted(operations - CALLED)
    if missing:
        raise AssertionError(f"the Python smoke test calls no {', '.join(missing)}")
    print(f"Python client: {len(CALLED)} operations called against {base_url} (every operation of the contract)")


if __name__ == "__main__":
    main(sys.argv[1], json.loads(Path(sys.argv[2]).read_text()), json.loads(Path(sys.argv[3]).read_text()))
