"""A team archive whose files are in S3-compatible object storage (AWS, or MinIO, Ceph, Garage, R2… at an
endpoint of their own): the storage's keys, handed to DuckDB, and what its refusals mean (docs/archive.md "Team
archive").

The access key id and secret are kept in this process's memory only (`use_keys`, from the keyring or the
environment variables a command was started with: tenant/team_archive.py) and reach DuckDB in memory only: a
TEMPORARY secret of the process's in-memory engine, scoped to the lake's place, made when the lake is first
attached. Every error about the lake is stripped of both (`scrub`) before anyone sees it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from tenant_events.errors import ConfigError, NetworkError, UserFixableError
from tenant_events.store import duck
from tenant_events.values.team_archive import Lake

Keys = tuple[str, str]  # (access key id, secret)
KeySource = Callable[[Lake], Keys | None]
_lock = threading.Lock()
_keys: dict[str, Keys] = {}
_source: list[KeySource] = []  # where keys not given are looked up (the keyring: tenant/team_archive.py)
_secrets_made: dict[str, tuple[Lake, Keys | None]] = {}  # by scope: what the engine's secret was made of
_UNREACHABLE: Final = (
    "Could not connect",
    "Unable to connect to URL",
    "Could not resolve",
    "Connection refused",
    "Timeout",
    "timed out",
    "SSL",
)


def place(lake: Lake) -> str:
    """The lake's files as the storage names them: its endpoint and location (its keys' slot)."""
    return f"{lake.endpoint or 'aws'} {lake.data_path}"


def use_keys(lake: Lake, keys: Keys | None) -> None:
    """The storage's keys for the lake's place, for this process only (memory; never written)."""
    with _lock:
        if keys and all(keys):
            _keys[place(lake)] = keys
        else:
            _keys.pop(place(lake), None)


def key_source(source: KeySource) -> None:
    """Where to look the keys of a place up when none were given (once, when its lake is first attached)."""
    with _lock:
        _source[:] = [source]


def _keys_of(lake: Lake) -> Keys | None:
    where = place(lake)
    with _lock:
        if where in _keys:
            return _keys[where]
        source = _source[0] if _source else None
    found = source(lake) if source is not None else None
    with _lock:
        if found and all(found):
            _keys.setdefault(where, found)
        return _keys.get(where)


def scrub(text: str) -> str:
    """`text` without any key id or secret this process holds."""
    with _lock:
        known = [part for keys in _keys.values() for part in keys]
    for part in sorted(known, key=len, reverse=True):
        text = text.replace(part, "…")
    return text


def configure(lake: Lake) -> None:
    """The httpfs extension loaded and the lake's place given its keys, endpoint, region and URL style: one
    TEMPORARY secret of the in-memory engine per place, made again when any of them changed since (new keys
    saved in the app, for one). Raises duckdb.Error."""
    duck.load_extension("httpfs")
    keys = _keys_of(lake)
    scope = lake.data_path.rstrip("/") + "/"
    reached = Lake("", lake.data_path, lake.endpoint, lake.region, lake.url_style)
    with _lock:
        if _secrets_made.get(scope) == (reached, keys):
            return
    endpoint = urlsplit(lake.endpoint) if lake.endpoint else None
    options = {
        "REGION": lake.region or "us-east-1",
        "URL_STYLE": lake.url_style or ("path" if endpoint else "vhost"),
        "SCOPE": scope,
    }
    if endpoint is not None:
        options["ENDPOINT"] = endpoint.netloc
    if keys:
        options["KEY_ID"], options["SECRET"] = keys
    said = ", ".join(f"{k} {duck.literal(v)}" for k, v in options.items())
    ssl = "false" if endpoint is not None and endpoint.scheme == "http" else "true"
    name = "lake_s3_" + hashlib.sha256(scope.encode()).hexdigest()[:12]
    conn = duck.cursor()
    try:
        conn.execute(f"CREATE OR REPLACE TEMPORARY SECRET {name} (TYPE s3, {said}, USE_SSL {ssl})")
    finally:
        conn.close()
    with _lock:
        _secrets_made[scope] = (reached, keys)


def probe(lake: Lake) -> None:
    """List the lake's place once, so a wrong key, a missing bucket or an endpoint out of reach is said when the
    lake is attached rather than at its first read. Raises duckdb.Error."""
    conn = duck.cursor()
    try:
        conn.execute("SELECT count(*) FROM glob(?)", [lake.data_path.rstrip("/") + "/*"]).fetchall()
    finally:
        conn.close()


def explain(lake: Lake, text: str) -> UserFixableError | None:
    """What the storage's refusal in DuckDB's error `text` (scrubbed) means, None when it is not one."""
    bucket = f"bucket {lake.bucket!r}"
    at = lake.endpoint or "AWS"
    if "SignatureDoesNotMatch" in text or "InvalidAccessKeyId" in text:
        return ConfigError(
            "team archive",
            f"access denied to {bucket} at {at}: the storage does not accept the key id and secret",
            "store the team archive's storage keys again",
        )
    if "AccessDenied" in text or "HTTP 403" in text or "(HTTP code 403)" in text:
        return ConfigError(
            "team archive",
            f"access denied to {bucket} at {at} for this key",
            "use keys allowed to read it (and, for the relay, to write it)",
        )
    if "NoSuchBucket" in text:
        return ConfigError("team archive", f"the {bucket} does not exist at {at}", "check the s3:// location")
    if any(word in text for word in _UNREACHABLE):
        return NetworkError(
            f"the team archive's storage at {at} cannot be reached",
            "check the endpoint and the network",
        )
    status = re.search(r"HTTP (\d{3})\b", text)
    if status is not None:  # (another answer of the storage's: a server error, a region it does not serve…)
        return NetworkError(
            f"the team archive's storage at {at} answered HTTP {status[1]} for {bucket}",
            "check the endpoint, region and URL style",
        )
    return None
