"""Check an audit export offline: python3 verify.py EXPORT.zip [PUBLISHED-JWKS.json]

Written into every export as `verify.py`, for an auditor to read and run; it imports nothing of compliance-api, only
the Python standard library and joserfc (`pip install joserfc`). It checks that:
1. `index.jws` is a signature, by a key of the JWKS (the one given, else the export's `jwks.json`), over exactly
   the bytes of `index.csv`;
2. every file the index names is in the zip with the SHA-256 the index gives, and no dossier file is left out;
3. each dossier's JSON carries a JWS by a key of the JWKS whose payload is that dossier.
The PDFs' own signatures are checked with pyHanko or a PDF reader (see VERIFY-*.txt). Exit status 0: all holds.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
import warnings
import zipfile
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

ALGORITHMS = ["EdDSA"]


def _payload(token: str, keys: KeySet) -> bytes:
    with warnings.catch_warnings():  # joserfc calls "EdDSA" deprecated in favour of "Ed25519"; both are Ed25519
        warnings.simplefilter("ignore")
        payload = jws.deserialize_compact(token, keys, algorithms=ALGORITHMS).payload
    assert isinstance(payload, bytes)
    return payload


def problems(archive: zipfile.ZipFile, keys: KeySet) -> list[str]:
    """What does not hold, each in a sentence (none: the export is intact and signed)."""
    members = set(archive.namelist())
    index = archive.read("index.csv")
    try:
        if _payload(archive.read("index.jws").decode(), keys) != index:
            return ["index.jws is not a signature over this index.csv"]
    except (JoseError, ValueError) as error:
        return [f"index.jws does not verify with these keys: {error}"]
    found, named = [], set()
    for row in csv.DictReader(io.StringIO(index.decode("utf-8"))):
        for kind in ("pdf", "json"):
            name = row[kind]
            named.add(name)
            if name not in members:
                found.append(f"{name} is in the index but not in the zip")
            elif hashlib.sha256(archive.read(name)).hexdigest() != row[f"{kind}_sha256"]:
                found.append(f"{name} does not have the SHA-256 the index gives")
        if row["json"] in members:
            found += _dossier_problems(row["json"], json.loads(archive.read(row["json"])), keys)
    found += [f"{name} is not in the index" for name in sorted(members - named) if name.startswith("dossiers/")]
    return found


def _dossier_problems(name: str, body: dict[str, Any], keys: KeySet) -> list[str]:
    try:
        signed = json.loads(_payload(body["jws"], keys))
    except (JoseError, ValueError) as error:
        return [f"{name}: its JWS does not verify with these keys: {error}"]
    return [] if signed == body["dossier"] else [f"{name}: the dossier differs from what its JWS signs"]


def main(arguments: list[str]) -> int:
    archive = zipfile.ZipFile(arguments[0])
    with open(arguments[1], "rb") if len(arguments) > 1 else archive.open("jwks.json") as source:
        keys = KeySet.import_key_set(json.load(source))
    found = problems(archive, keys)
    for problem in found:
        sys.stdout.write(f"FAILED: {problem}\n")
    if not found:
        sys.stdout.write("OK: index.jws signs index.csv, and every dossier it names is present, unchanged and signed\n")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
