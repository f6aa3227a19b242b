"""Passport signing keys: Ed25519 JWKs in files, one folder per environment, newest signs, all are published.

Layout: `<COMPLIANCE_SIGNING_KEYS_DIR>/<live|test>/<NNNN>.jwk.json`, each a private JWK whose `kid` is its RFC 7638
thumbprint. The highest number signs; `compliance-api keys rotate` adds the next one, and every older key stays in
the JWKS so signatures made with it still verify. Beside each JWK, `<NNNN>.pdf-signer.pem` holds the ECDSA P-256 key
and self-issued certificate that sign dossier PDFs (`dossier/pdf_signature.py`): PDF readers rarely validate Ed25519,
so a PDF signature needs a key of its own, made, kept (owner-only, like the JWK) and rotated with the JWK of the same
number; every certificate is published beside the JWKS. Key files are never changed once written, so a folder is re-read
only when its list of files changes, and listed again only when its mtime changes: every worker picks up a rotation
on its next request, without a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from joserfc import jws
from joserfc.errors import SecurityWarning
from joserfc.jwk import OKPKey

from compliance_api.kit.environment import Environment
from compliance_api.passport import certificates

ALGORITHM = "EdDSA"
DEFAULT_OPERATOR = "compliance-api"
SUFFIX = ".jwk.json"
STILL_NS = 2_000_000_000


class NoSigningKey(Exception):
    def __init__(self, folder: Path) -> None:
        super().__init__(f"no passport signing key in {folder}; run `compliance-api keys rotate --env ...`")


class NoPdfSigner(Exception):
    def __init__(self, folder: Path, number: int) -> None:
        super().__init__(
            f"passport key {number:04d} in {folder} has no PDF signing key and certificate "
            f"({number:04d}{certificates.SUFFIX}); run `compliance-api keys rotate --env ...`"
        )


@dataclass(frozen=True, slots=True)
class _Loaded:
    names: tuple[str, ...]
    keys: tuple[OKPKey, ...]
    pdf_signers: tuple[certificates.PdfSigningKey, ...]
    newest_number: int
    folder: tuple[int, int] | None  # the folder's (inode, mtime in ns) just before it was listed
    listed_ns: int

    def still_current(self, folder: Path) -> bool:
        """Whether the folder is unchanged since it was listed, from one `stat` instead of a listing per request.

        File times are kept at the kernel's coarse clock tick, so a change in the same tick as the listing could
        leave the mtime unchanged; a listing is trusted only when the folder had been still for a while before it
        (git's "racily clean" rule).
        """
        if self.folder is None or self.listed_ns - self.folder[1] < STILL_NS:
            return False
        return _stat(folder) == self.folder


def _folder(root: Path, environment: Environment) -> Path:
    return root / environment.value


def _stat(folder: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(folder)
    except FileNotFoundError:
        return None
    return status.st_ino, status.st_mtime_ns


def _key_files(folder: Path, suffix: str = SUFFIX) -> list[Path]:
    return sorted(folder.glob(f"*{suffix}")) if folder.is_dir() else []


def add_key(root: Path, environment: Environment, operator: str = DEFAULT_OPERATOR) -> str:
    """Write a new Ed25519 key after the existing ones (it signs from now on), and its PDF signing key and certificate
    naming `operator`; returns its `kid`."""
    folder = _folder(root, environment)
    folder.mkdir(parents=True, exist_ok=True)
    key = OKPKey.generate_key("Ed25519", parameters={"use": "sig"}, private=True)
    kid = key.thumbprint()
    taken = [certificates.number_of(path) for path in _key_files(folder) + _key_files(folder, certificates.SUFFIX)]
    number = max(taken, default=0) + 1  # after a companion whose JWK a crash kept from being written, too
    # The companion first: it claims the number (FileExistsError if another rotation took it), and the JWK that
    # makes it the signing key appears only once its companion is there.
    certificates.write_pdf_signer(folder, number, environment, operator)
    draft = folder / f".{kid}.tmp"
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(key.as_dict(private=True, kid=kid, alg=ALGORITHM), handle)
    try:  # a hard link appears complete or not at all, and fails if another process took the number
        os.link(draft, folder / f"{number:04d}{SUFFIX}")
    finally:
        draft.unlink()
    return kid


def _read_keys(files: list[Path]) -> tuple[OKPKey, ...]:
    return tuple(OKPKey.import_key(json.loads(path.read_text())) for path in files)


def sign_with(key: OKPKey, payload: bytes) -> str:
    """A compact JWS over `payload` with `key`, its `kid` in the header."""
    # `EdDSA` is what every JOSE library verifies today (RFC 9864's `Ed25519` is not in PyJWT yet);
    # joserfc warns that it is deprecated, which is the known trade-off, not news on every request.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        return jws.serialize_compact({"alg": ALGORITHM, "kid": key.kid}, payload, key, algorithms=[ALGORITHM])


class SigningKeys:
    """The keys of both environments; embedded mode creates a first key per environment when there is none."""

    def __init__(self, root: Path, *, generate: bool, operator: str = DEFAULT_OPERATOR) -> None:
        self.root = root
        self.generate = generate
        self.operator = operator
        self._loaded: dict[Environment, _Loaded] = {}
        self._folders = {environment: _folder(root, environment) for environment in Environment}

    def _load(self, environment: Environment) -> _Loaded:
        folder = self._folders[environment]
        loaded = self._loaded.get(environment)
        if loaded is not None and loaded.keys and loaded.still_current(folder):
            return loaded
        status, listed_ns = _stat(folder), time.time_ns()
        files = _key_files(folder)
        if self.generate and not files:
            with contextlib.suppress(FileExistsError):  # another worker generated it first
                add_key(self.root, environment, self.operator)
            status, files = None, _key_files(folder)
        newest = certificates.number_of(files[-1]) if files else 0
        if self.generate and files and not (folder / f"{newest:04d}{certificates.SUFFIX}").exists():
            with contextlib.suppress(FileExistsError):  # a key made before PDFs were signed: its companion now
                certificates.write_pdf_signer(folder, newest, environment, self.operator)
            status = None
        pdf_files = _key_files(folder, certificates.SUFFIX)
        names = tuple(path.name for path in files + pdf_files)
        if loaded is not None and loaded.names == names:
            keys, pdf_signers = loaded.keys, loaded.pdf_signers
        else:
            keys, pdf_signers = _read_keys(files), tuple(certificates.read_pdf_signer(path) for path in pdf_files)
        loaded = self._loaded[environment] = _Loaded(names, keys, pdf_signers, newest, status, listed_ns)
        if not loaded.keys:
            raise NoSigningKey(folder)
        return loaded

    def keys(self, environment: Environment) -> tuple[OKPKey, ...]:
        return self._load(environment).keys

    def pdf_signer(self, environment: Environment) -> certificates.PdfSigningKey:
        """The key and certificate that sign the environment's dossier PDFs: the newest passport key's companion."""
        loaded = self._load(environment)
        for signer in reversed(loaded.pdf_signers):  # a rotation writes the next one just before its JWK
            if signer.number == loaded.newest_number:
                return signer
        raise NoPdfSigner(self._folders[environment], loaded.newest_number)

    def pdf_certificates(self, environment: Environment) -> tuple[certificates.PdfSigningKey, ...]:
        """Every PDF signing certificate of the environment (with its key), oldest first: all are published."""
        return self._load(environment).pdf_signers

    def signing_key(self, environment: Environment) -> OKPKey:
        """The environment's newest key: the one that signs."""
        return self.keys(environment)[-1]

    def sign(self, environment: Environment, payload: bytes) -> str:
        """A compact JWS over `payload` with the environment's newest key, its `kid` in the header."""
        return sign_with(self.signing_key(environment), payload)

    def jwks(self, environment: Environment) -> dict[str, Any]:
        """The public JWK Set of one environment (RFC 7517), oldest key first."""
        return {"keys": [key.as_dict(private=False, kid=key.kid, alg=ALGORITHM) for key in self.keys(environment)]}
