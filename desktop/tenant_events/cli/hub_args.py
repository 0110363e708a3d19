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
        "--team-archive-path", metavar="DIR", help="the shared folder the team archive's files are in"
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


def team_archive(
    args: argparse.Namespace, catalog: str = "", data_path: str = "", *, viewer: bool = True
) -> Lake | None:
    """--team-archive and --team-archive-path (over a saved hub profile's `catalog` and `data_path`) as the lake
    to use, None without one; ConfigError naming the option on a bad value (a `viewer` follows every type). A password in
    $TENANT_EVENTS_TEAM_ARCHIVE_PASSWORD is kept in the keyring for the next start (and the app)."""
    from tenant_events.settings.team_archive import check_catalog, check_data_path
    from tenant_events.tenant.sign_in import open_secret_store
    from tenant_events.tenant.team_archive import team_lake

    catalog, data_path = args.team_archive or catalog, args.team_archive_path or data_path
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
        catalog = check_catalog(catalog)
    except ValueError as exc:
        raise ConfigError("--team-archive", str(exc)) from None
    try:
        data_path = check_data_path(data_path)
    except ValueError as exc:
        raise ConfigError("--team-archive-path", str(exc)) from None
    return team_lake(catalog, data_path, open_secret_store().store, os.environ.get(TEAM_PASSWORD_ENV, ""))
