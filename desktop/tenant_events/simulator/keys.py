"""The simulator's RS256 signing key and the JWKS it publishes, as Auth0 does.

With a data dir the private key is kept as `signing-key.pem` (mode 0600) so tokens stay valid across
restarts; without one a fresh key is made per run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from joserfc.jwk import KeySet, RSAKey

KEY_FILE = "signing-key.pem"


def load_or_create_key(data_dir: Path | None) -> RSAKey:
    """The signing key, with `kid` = its RFC 7638 thumbprint."""
    path = data_dir / KEY_FILE if data_dir else None
    if path is not None and path.exists():
        key = RSAKey.import_key(path.read_bytes())
    else:
        key = RSAKey.generate_key(2048, private=True)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(key.as_pem(private=True))
    return RSAKey.import_key(
        key.as_dict(private=True), parameters={"kid": key.thumbprint(), "use": "sig", "alg": "RS256"}
    )


def jwks(key: RSAKey) -> dict[str, Any]:
    """The public JSON Web Key Set served at /.well-known/jwks.json."""
    public = key.as_dict(private=False)
    return {"keys": [{k: public[k] for k in ("kty", "n", "e", "kid", "use", "alg") if k in public}]}


def public_keyset(key: RSAKey) -> KeySet:
    return KeySet([RSAKey.import_key(jwks(key)["keys"][0])])
