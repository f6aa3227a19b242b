"""The key folder is listed again only when it changed: a rotation is still seen on the next call, also when it
lands in the same tick of the file-time clock as the previous listing."""

from __future__ import annotations

import os
import time
from pathlib import Path

from compliance_api.kit.environment import Environment
from compliance_api.passport.signing import SigningKeys, add_key

LIVE = Environment.live


def set_mtime(folder: Path, ns: int) -> None:
    os.utime(folder, ns=(ns, ns))


def test_a_rotation_after_a_trusted_listing_is_seen(tmp_path: Path) -> None:
    add_key(tmp_path, LIVE)
    set_mtime(tmp_path / "live", time.time_ns() - 60 * 10**9)  # the folder has been still for a minute
    keys = SigningKeys(tmp_path, generate=False)
    first = keys.signing_key(LIVE)
    assert keys.signing_key(LIVE) is first
    new_kid = add_key(tmp_path, LIVE)
    assert keys.signing_key(LIVE).kid == new_kid
    assert [key.kid for key in keys.keys(LIVE)] == [first.kid, new_kid]


def test_a_rotation_in_the_same_clock_tick_as_the_listing_is_seen(tmp_path: Path) -> None:
    add_key(tmp_path, LIVE)
    folder = tmp_path / "live"
    tick = time.time_ns()
    set_mtime(folder, tick)
    keys = SigningKeys(tmp_path, generate=False)
    first = keys.signing_key(LIVE)
    new_kid = add_key(tmp_path, LIVE)
    set_mtime(folder, tick)  # a coarse clock gives the change the listing's time stamp
    assert keys.signing_key(LIVE).kid == new_kid != first.kid
