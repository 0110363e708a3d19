"""Where a team's shared archive is (docs/archive.md "Team archive"): DuckLake's catalog in PostgreSQL and the
shared folder or the S3-compatible object storage its Parquet files are in (`s3://bucket/prefix`, and for a
service other than AWS its endpoint, region and URL style). Checked here, where the settings file and the
command line meet them. The storage's access key id and secret are never part of them (the keyring's).

The catalog is libpq's connection words behind `postgres:` (`postgres:dbname=events host=db.example.org
user=viewer`). It never holds a password: it is written into the settings file and shows in `ps`. The password
is kept in the keyring (tenant/team_archive.py).
"""

from __future__ import annotations

import os
import re
from typing import Final
from urllib.parse import urlsplit

from tenant_events.values.team_archive import S3_SCHEME

_PREFIX: Final = "postgres:"
_WORD: Final = re.compile(r"^[a-z_]+=\S+$")
_SECRET_KEYS: Final = ("password",)
_BUCKET: Final = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")  # S3's bucket names
_PREFIX_PART: Final = re.compile(r"^[A-Za-z0-9!_.*'()=+-]+$")  # S3's safe key characters
_REGION: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")
URL_STYLES: Final = ("path", "vhost")


def check_catalog(text: str) -> str:
    """`text` as a catalog; ValueError naming the problem (not PostgreSQL's words, a password in it)."""
    catalog = " ".join(text.split())
    words = catalog.removeprefix(_PREFIX).split()
    if not catalog.startswith(_PREFIX) or not words or not all(_WORD.match(w) for w in words):
        raise ValueError(  # (not quoted back: a URL form may hold a password)
            "is not a PostgreSQL catalog; use postgres:dbname=NAME host=HOST user=USER"
        )
    if any(w.split("=", 1)[0] in _SECRET_KEYS for w in words):
        raise ValueError("the catalog holds a password; leave it out (the keyring keeps it)")
    if not any(w.startswith("dbname=") for w in words):
        raise ValueError("names no database; add dbname=NAME")
    return catalog


def check_data_path(text: str) -> str:
    """`text` as an absolute folder path or an s3://bucket/prefix location; ValueError naming the problem."""
    path = text.strip()
    if path.lower().startswith(S3_SCHEME):
        return check_s3_location(path)
    if "://" in path:
        raise ValueError(
            f"{path.split('://', 1)[0]}:// is not a place for the team archive's files; give a folder this "
            "computer mounts or an s3://bucket/prefix location"
        )
    if not path or not os.path.isabs(os.path.expanduser(path)):
        raise ValueError(f"{path!r} is not an absolute folder path (e.g. /mnt/team/events) or s3:// location")
    return os.path.normpath(os.path.expanduser(path))


def check_s3_location(text: str) -> str:
    """`s3://bucket/prefix` (the prefix optional) in its one spelling, without a trailing slash; ValueError
    naming the part that is wrong (not quoted back whole: a pasted URL may hold a signature)."""
    rest = text.strip()[len(S3_SCHEME) :]
    if any(c in rest for c in "?#@ \\"):
        raise ValueError("an s3:// location is s3://bucket/prefix, without a query, user or spaces")
    bucket, _, prefix = rest.partition("/")
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise ValueError(
            "names no valid bucket (3–63 lowercase letters, digits, dots or dashes): use s3://bucket/prefix"
        )
    parts = [p for p in prefix.split("/") if p]
    for part in parts:
        if part in (".", "..") or not _PREFIX_PART.match(part):
            raise ValueError(
                f"the prefix part {part[:40]!r} may hold letters, digits and !_.*'()=+- only, and not be . or .."
            )
    return S3_SCHEME + "/".join([bucket, *parts])


def check_endpoint(text: str) -> str:
    """The object storage's endpoint, `https://host[:port]` (or http:// on a trusted network); ValueError
    otherwise."""
    url = text.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        _ = parts.port  # (a port out of range raises here)
    except ValueError:
        raise ValueError("is not a URL; use https://HOST[:PORT]") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(
            "is not an endpoint URL; use https://HOST[:PORT] (http:// only on a trusted network)"
        )
    if parts.username or parts.password:
        raise ValueError("holds a user or password; leave them out (the keyring keeps the keys)")
    if parts.path or parts.query or parts.fragment:
        raise ValueError("has more than HOST[:PORT]; the bucket goes in the s3:// location")
    return f"{parts.scheme}://{parts.netloc}"


def check_region(text: str) -> str:
    """An object storage's region (us-east-1, eu-central-1, auto…); ValueError otherwise."""
    region = text.strip()
    if not _REGION.match(region):
        raise ValueError(f"{region[:40]!r} is not a region (e.g. us-east-1, or auto for R2)")
    return region


def check_url_style(text: str) -> str:
    """path (https://endpoint/bucket/key, most services besides AWS) or vhost (https://bucket.endpoint/key)."""
    style = text.strip().lower()
    if style not in URL_STYLES:
        raise ValueError(f"{style[:20]!r} is not a URL style; use path or vhost")
    return style


def check_key_id(text: str) -> str:
    """An access key id: letters and digits (AKIA…, a MinIO user's key); ValueError otherwise (never quoted)."""
    key_id = text.strip()
    if not re.fullmatch(r"[A-Za-z0-9_+=,.@-]{3,128}", key_id):
        raise ValueError("is not an access key id (3–128 letters and digits, as the storage gave it)")
    return key_id
