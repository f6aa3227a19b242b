"""Webhooks: signed (Standard Webhooks), durable, retried deliveries of the outbox's events.

- `catalogue`: event types, their `data` schemas and routing, published as the contract's `webhooks`.
- Routing (who receives an event): `wtta.admission.updated` is about the public register, not a user, so it goes to
  every enabled endpoint of the event's environment that subscribed to it. Events about one user's data
  (`passport.*`, `dac7.*` → the freelancer; `api_token.*`, `classification.created`, `webhook.endpoint.failing` →
  the account) go only to that user's endpoints: the payload field named in the catalogue says whose it is.
  `webhook.test` goes to the one endpoint it was sent to. Nothing crosses environments.
- `signing`: `whsec_` secrets sealed with AES-GCM at rest (they must stay usable for HMAC, so hashing is not an
  option), signatures by the `standardwebhooks` package.
- `ssrf`: URL policy at registration, resolve-check-pin at connect time.
- `delivery`: dispatch (outbox → one delivery per matching endpoint), claim (`FOR UPDATE SKIP LOCKED` + lease, test
  events first, within the room the worker leaves each endpoint and account), send, record; the retry schedule is in
  its docstring. `worker`: the loop that runs them, sending to accounts and endpoints in turn. `wake`: a queued test
  event, replay or retry wakes the workers (commit hook, `NOTIFY webhook_queued`).
"""
