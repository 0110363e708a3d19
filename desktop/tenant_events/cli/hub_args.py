"""Options `relay` and `stream --hub` share: where the hub is and how to sign in to it.

Secrets never go on the command line (it shows in `ps` and shell history): a password or token comes from the
environment, an NKey seed or creds file from a file whose path is given.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.errors import ConfigError
from tenant_events.hub.subjects import check_hub_tenant
from tenant_events.paths import regular_file_bytes
from tenant_events.settings.hubs import split_hub_urls
from tenant_events.values.team_archive import Lake

if TYPE_CHECKING:  # the NATS client loads only when a command talks to a hub (~0.2 s of start-up)
    from tenant_events.hub.connection import HubAuth, HubOptions

PASSWORD_ENV: Final = "TENANT_EVENTS_HUB_PASSWORD"
TOKEN_ENV: Final = "TENANT_EVENTS_HUB_TOKEN"
TEAM_PASSWORD_ENV: Final = "TENANT_EVENTS_TEAM_ARCHIVE_PASSWORD"
TEAM_KEY_ID_ENV: Final = "TENANT_EVENTS_TEAM_ARCHIVE_KEY_ID"
TEAM_SECRET_ENV: Final = "TENANT_EVENTS_TEAM_ARCHIVE_SECRET"
_STORAGE_OPTIONS: Final = {  # option: (the Lake's field, its check in settings/team_archive.py)
    "team_archive_endpoint": ("endpoint", "check_endpoint"),
    "team_archive_region": ("region", "check_region"),
    "team_archive_url_style": ("url_style", "check_url_style"),
}


def add_hub_args(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_argument_group("team hub (NATS JetStream)")
    group.add_argument(
        "--hub",
        metavar="URL[,URL…]",
        required=required,
        help="the hub's servers: nats://HOST:PORT on this computer, tls://HOST:PORT elsewhere",
    )
    group.add_argument(
        "--hub-tenant",
        metavar="NAME",
        type=_hub_tenant,
        help="the tenant's name on the hub (default: the profile or database name)",
    )
    sign_in = group.add_mutually_exclusive_group()
    sign_in.add_argument(
        "--hub-user", metavar="USER", help=f"sign in as USER with the password in ${PASSWORD_ENV}"
    )
    sign_in.add_argument(
        "--hub-nkey", metavar="FILE", type=Path, help="sign in with the NKey seed (SU…) in FILE"
    )
    sign_in.add_argument("--hub-creds", metavar="FILE", type=Path, help="sign in with a NATS .creds file")
    group.add_argument("--hub-ca", metavar="FILE", help="PEM of the CA that signed the hub's TLS certificate")
    group.add_argument(
        "--team-archive",
        metavar="CATALOG",
        help="the team's shared archive: its DuckLake catalog, postgres:dbname=NAME host=HOST user=USER "
        f"(the password from ${TEAM_PASSWORD_ENV}, kept in the keyring, or the keyring's)",
    )
    group.add_argument(
        "--team-archive-path",
        metavar="DIR|s3://BUCKET/PREFIX",
        help="the shared folder or the S3-compatible object storage the team archive's files are in (its "
        f"access key id and secret from ${TEAM_KEY_ID_ENV} and ${TEAM_SECRET_ENV}, kept in the keyring, or "
        "the keyring's)",
    )
    group.add_argument(
        "--team-archive-endpoint",
        metavar="URL",
        help="the object storage's endpoint for a service other than AWS (MinIO, Ceph, Garage, R2…): "
        "https://HOST[:PORT]",
    )
    group.add_argument(
        "--team-archive-region", metavar="REGION", help="the object storage's region (default us-east-1)"
    )
    group.add_argument(
        "--team-archive-url-style",
        metavar="STYLE",
        help="path or vhost (default: path with --team-archive-endpoint, vhost on AWS)",
    )
    group.description = (
        f"With none of --hub-user/--hub-nkey/--hub-creds, a token in ${TOKEN_ENV} is used if set."
    )


def _hub_tenant(value: str) -> str:
    try:
        return check_hub_tenant(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


SECRET_FILE_MAX: Final = 64 * 1024  # bytes: a creds file is about 1 KB, a seed 58 characters


def _read_secret(option: str, path: Path) -> str:
    """The text of a key or creds file (a regular file of at most SECRET_FILE_MAX: /dev/zero or a FIFO given
    here is refused, never read forever)."""
    try:
        return regular_file_bytes(path, SECRET_FILE_MAX).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            option, f"{path} is not text", "give the file the hub's administrator gave you"
        ) from None
    except ValueError as exc:
        raise ConfigError(option, f"{path} {exc}", "give the file the hub's administrator gave you") from None


def _checked(kind: str, option: str, path: Path) -> str:
    """The secret in `path`, checked for `kind`; ConfigError naming the option and the file otherwise."""
    from tenant_events.hub.credentials import check_secret

    try:
        return check_secret(kind, _read_secret(option, path))
    except ConfigError as exc:
        if exc.field == option:
            raise
        raise ConfigError(option, f"{path} {exc.message.removeprefix(exc.field + ': ')}", exc.hint) from None


def hub_auth(args: argparse.Namespace) -> HubAuth:
    from tenant_events.hub.connection import HubAuth

    if args.hub_creds:
        return HubAuth("creds", secret=_checked("creds", "--hub-creds", args.hub_creds))
    if args.hub_nkey:
        return HubAuth("nkey", secret=_checked("nkey", "--hub-nkey", args.hub_nkey))
    if args.hub_user:
        password = os.environ.get(PASSWORD_ENV, "")
        if not password:
            raise ConfigError("--hub-user", f"no password for {args.hub_user!r}", f"set {PASSWORD_ENV}")
        return HubAuth("password", args.hub_user, password)
    token = os.environ.get(TOKEN_ENV, "")
    return HubAuth("token", secret=token) if token else HubAuth()


def hub_options(args: argparse.Namespace) -> HubOptions:
    """The --hub options as connection options; ConfigError naming the option on a bad value."""
    from tenant_events.hub.connection import HubOptions, ca_context

    try:
        urls = split_hub_urls(args.hub)
    except ValueError as exc:
        raise ConfigError("--hub", str(exc)) from None
    if args.hub_ca:
        try:
            ca_context(args.hub_ca)
        except ValueError as exc:
            raise ConfigError(
                "--hub-ca", str(exc), "give the PEM file of the CA that signed the hub's certificate"
            ) from None
    return HubOptions(tuple(urls), hub_auth(args), args.hub_ca or "")


def team_archive(args: argparse.Namespace, saved: Lake | None = None, *, viewer: bool = True) -> Lake | None:
    """--team-archive, --team-archive-path and the object storage's options (over a saved hub profile's lake) as
    the lake to use, None without one; ConfigError naming the option on a bad value (a `viewer` follows every
    type). A password in $TENANT_EVENTS_TEAM_ARCHIVE_PASSWORD and storage keys in $TENANT_EVENTS_TEAM_ARCHIVE_KEY_ID
    and $TENANT_EVENTS_TEAM_ARCHIVE_SECRET are kept in the keyring for the next start (and the app)."""
    from tenant_events.settings import team_archive as checks
    from tenant_events.tenant.sign_in import open_secret_store
    from tenant_events.tenant.team_archive import check_reachable, team_lake

    base = saved or Lake("", "")
    catalog, data_path = args.team_archive or base.catalog, args.team_archive_path or base.data_path
    if not catalog and not data_path:
        return None
    if not catalog or not data_path:
        missing = "--team-archive" if not catalog else "--team-archive-path"
        raise ConfigError(missing, "is required for a team archive", "give both the catalog and the folder")
    if viewer and args.event_type:
        raise ConfigError(
            "--event-type",
            "a team archive holds every event type",
            "follow them all to read the team archive",
        )
    try:
        catalog = checks.check_catalog(catalog)
    except ValueError as exc:
        raise ConfigError("--team-archive", str(exc)) from None
    try:
        data_path = checks.check_data_path(data_path)
    except ValueError as exc:
        raise ConfigError("--team-archive-path", str(exc)) from None
    storage: dict[str, str] = {}
    for option, (key, check) in _STORAGE_OPTIONS.items():
        value = getattr(args, option, None) or getattr(base, key)
        if not value:
            continue
        flag = "--" + option.replace("_", "-")
        if not data_path.startswith("s3://"):
            raise ConfigError(
                flag, "is for files in object storage only", "give an s3:// --team-archive-path"
            )
        try:
            storage[key] = getattr(checks, check)(value)
        except ValueError as exc:
            raise ConfigError(flag, str(exc)) from None
    keys = _storage_keys()
    lake = team_lake(
        Lake(catalog, data_path, **storage),
        open_secret_store().store,
        os.environ.get(TEAM_PASSWORD_ENV, ""),
        keys,
    )
    check_reachable(lake)  # before anything starts: wrong keys or a missing bucket are one line
    return lake


def _storage_keys() -> tuple[str, str] | None:
    """The object storage's keys from the environment (both or neither), checked without quoting them."""
    from tenant_events.settings.team_archive import check_key_id

    key_id, secret = os.environ.get(TEAM_KEY_ID_ENV, ""), os.environ.get(TEAM_SECRET_ENV, "")
    if not key_id and not secret:
        return None
    if not key_id or not secret:
        missing = TEAM_KEY_ID_ENV if not key_id else TEAM_SECRET_ENV
        raise ConfigError(f"${missing}", "is required with the other storage key", "set both, or neither")
    try:
        return check_key_id(key_id), secret
    except ValueError as exc:
        raise ConfigError(f"${TEAM_KEY_ID_ENV}", str(exc)) from None
