"""CSRF protection for every dashboard form: a signed double-submit token bound to the browser's session.

Each browser gets a random `dashboard_csrf` cookie (HttpOnly, SameSite=Lax). Every form carries the hidden field
`csrf_token` = HMAC(server secret, csrf cookie + session cookie). A POST is accepted only when that field matches
(constant-time) what the cookies of the request give. Another site can make a browser send the cookies, but cannot
read them or the page, so it cannot produce the field; and signing in changes the session cookie, so a token
planted before sign-in is useless after it (OWASP "signed double-submit cookie"). Requests whose `Origin` names
another site are refused as well.
"""

from __future__ import annotations

import hmac

from compliance_api.dashboard.keys import keyed_hash

FIELD = "csrf_token"


def token_for(pepper: bytes, *, csrf_cookie: str, session_cookie: str | None) -> str:
    return keyed_hash(pepper, "csrf", f"{csrf_cookie}:{session_cookie or ''}")


def is_valid(pepper: bytes, submitted: str, *, csrf_cookie: str | None, session_cookie: str | None) -> bool:
    if not csrf_cookie or not submitted:
        return False
    expected = token_for(pepper, csrf_cookie=csrf_cookie, session_cookie=session_cookie)
    return hmac.compare_digest(expected, submitted)


def same_origin(origin: str | None, *, scheme: str, host: str) -> bool:
    """True unless the browser named another origin. A missing Origin proves nothing, and browsers send
    `Origin: null` for our own forms because every response carries `Referrer-Policy: no-referrer`; the token
    check decides then."""
    return origin in {None, "null"} or origin == f"{scheme}://{host}"
