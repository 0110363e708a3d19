"""`tenant-events login` and `tenant-events logout`: browser sign-in from the terminal.

`login --auth-url URL --client-id ID` checks the tenant (its discovery document answers and names it as the
issuer), then creates or updates a tenant profile in the data dir and signs in; with
`--tenant NAME` (or nothing, when the data dir holds one profile) it signs in to a saved profile. A profile keeps
its tenant: `--name` of a profile that signs in elsewhere or streams from elsewhere is refused (exit 3). The refresh
token goes to the system keyring; `tenant-events stream` then uses it. With `--no-browser` the FIRST stdout line
is the authorization URL alone (for scripts and remote shells); otherwise the browser is opened and the URL is
printed too. `logout` revokes the refresh token at the tenant and deletes it from the keyring.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from tenant_events.cli.options import add_data_dir, number, profile_name
from tenant_events.errors import ConfigError
from tenant_events.http import InsecureURLError, check_url
from tenant_events.logs import setup_logging
from tenant_events.paths import AppPaths
from tenant_events.settings import (
    Settings,
    SharedSettings,
    TenantProfile,
    callback_urls,
    load_settings,
    make_profile,
    tenant_kept,
)
from tenant_events.tenant.origin import check_origin
from tenant_events.url_forms import DEFAULT_CALLBACK_PORT

EXIT_HELP = "Exit codes: 0 signed in/out · 2 usage · 3 bad profile value · 4 sign-in failed · 6 network"


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 1024 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a usable port (1024–65535)")
    return port


def register(subparsers: Any) -> None:
    login = subparsers.add_parser(
        "login",
        help="sign in to a tenant in your browser",
        description=__doc__,
        epilog=EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    login.add_argument("--tenant", metavar="NAME", type=profile_name, help="a saved tenant profile")
    login.add_argument(
        "--auth-url", metavar="URL", help="the tenant's https://<domain> (creates/updates a profile)"
    )
    login.add_argument(
        "--client-id", metavar="ID", help="the native application's client ID (with --auth-url)"
    )
    login.add_argument("--audience", metavar="AUD", help="API audience (default {auth-url}/api/v2/)")
    login.add_argument(
        "--base-url", metavar="URL", help="where the event stream lives (default {auth-url}/api/v2)"
    )
    login.add_argument(
        "--name",
        metavar="NAME",
        type=profile_name,
        help="profile name for --auth-url (default: from the domain)",
    )
    login.add_argument(
        "--port",
        metavar="N",
        type=_port,
        action="append",
        dest="ports",
        help="a registered fixed callback port (repeatable; tried in order). Default: any free port",
    )
    add_data_dir(login)
    login.add_argument(
        "--no-browser", action="store_true", help="print the URL (first line) instead of opening it"
    )
    login.add_argument(
        "--timeout", metavar="S", type=number(1, 86400), default=300.0, help="give up after S seconds (300)"
    )
    login.add_argument("--prompt", choices=["login", "consent", "none"], help="OIDC prompt (e.g. login)")
    login.set_defaults(run=run_login)

    logout = subparsers.add_parser(
        "logout",
        help="sign out: revoke the refresh token and remove it from the keyring",
        epilog=EXIT_HELP,
    )
    logout.add_argument(
        "--tenant", metavar="NAME", type=profile_name, help="the tenant profile (default: the only one)"
    )
    add_data_dir(logout)
    logout.add_argument("--browser", action="store_true", help="also end the tenant's browser session")
    logout.add_argument(
        "--return-to",
        metavar="URL",
        help="with --browser: where the tenant sends the browser afterwards (must be an Allowed Logout URL)",
    )
    logout.set_defaults(run=run_logout)


def _profile_for_login(args: argparse.Namespace, settings: Settings) -> tuple[TenantProfile, bool]:
    """(profile, whether it is new or changed and must be saved)."""
    if args.auth_url or args.client_id:
        if args.tenant:
            raise ConfigError(
                "--tenant", "use either --tenant NAME or --auth-url URL --client-id ID, not both"
            )
        if not (args.auth_url and args.client_id):
            missing = "--client-id" if args.auth_url else "--auth-url"
            raise ConfigError(
                missing, "is required with " + ("--auth-url" if args.auth_url else "--client-id")
            )
        fields: dict[str, Any] = {"auth_url": args.auth_url, "client_id": args.client_id}
        if args.name:
            fields["name"] = args.name
        for key in ("audience", "base_url"):
            if getattr(args, key):
                fields[key] = getattr(args, key)
        if args.ports:
            fields["redirect_ports"] = args.ports
        profile = make_profile(**fields)
        existing = next((t for t in settings.tenants if t.name == profile.name), None)
        if existing is not None:
            # URLs come from this command; what only the profile knows (scopes, types, ports) is kept.
            keep = existing.model_dump(include={"scopes", "event_types", "redirect_ports"})
            profile = make_profile(**(keep | fields | {"name": profile.name}))
        return profile, existing != profile
    profile = settings.tenant(args.tenant)
    if args.ports:
        profile = make_profile(**(profile.model_dump() | {"redirect_ports": args.ports}))
        return profile, True
    return profile, False


async def _login(args: argparse.Namespace, paths: AppPaths, profile: TenantProfile) -> int:
    from tenant_events.tenant.link import TenantLink
    from tenant_events.tenant.sign_in import SignInOptions, open_in_browser, open_secret_store
    from tenant_events.tenant.sources import of_profile

    opened = await asyncio.to_thread(open_secret_store)

    def opener(url: str) -> None:
        if args.no_browser:
            print(url, flush=True)  # the first stdout line, alone (scripts read it)
            print(
                f"Open the URL above in a browser to sign in to {profile.name}.", file=sys.stderr, flush=True
            )
            return
        print(f"Opening your browser to sign in to {profile.name}. If it does not open, visit:", flush=True)
        print(url, flush=True)
        if not open_in_browser(url):
            print("Could not start a browser: open the URL above yourself.", file=sys.stderr, flush=True)

    options = SignInOptions(timeout=args.timeout, prompt=args.prompt)
    async with TenantLink(profile.name, paths, of_profile(profile, opened.store)) as link:
        result = await link.sign_in(opener, options=options)
    who = result.user.display_name
    email = f" <{result.user.email}>" if result.user.email and result.user.email != who else ""
    print(f"Signed in to {profile.name} as {who}{email}", flush=True)
    notice = result.notice or opened.notice
    if notice:
        print(f"tenant-events: {notice}", file=sys.stderr, flush=True)
    return 0


def run_login(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir).ensure()
    setup_logging(paths.log_dir, stderr=False)
    notices: list[str] = []
    shared = SharedSettings(paths, notices)  # written at the end, keeping what the app saved meanwhile
    settings = shared.base.model_copy(deep=True)
    for notice in notices:
        print(f"tenant-events: {notice}", file=sys.stderr)
    profile, changed = _profile_for_login(args, settings)
    previous = next((t for t in settings.tenants if t.name == profile.name), None)
    # A profile keeps its tenant: its stored sign-in and its database are that tenant's (refused before
    # anything is saved or sent, so a sign-in that never finishes leaves the old profile as it was).
    tenant_kept(settings.tenants, profile, "--name")
    check_origin(paths, profile.name, profile.base_url, "--name")
    if changed:
        # Checked before it is saved: a domain that is not this tenant's OpenID provider leaves no profile.
        asyncio.run(_check(profile))
        settings.upsert(profile)
        if settings.active_tenant is None:
            settings.active_tenant = profile.name
        shared.save(settings)
        print(
            f"Saved tenant profile {profile.name!r}. {_callbacks_line(profile)}", file=sys.stderr, flush=True
        )
    code = asyncio.run(_login(args, paths, profile))
    if previous is not None and previous.client_id != profile.client_id:  # the only change a profile may make
        asyncio.run(_retire(paths, previous, profile))  # to what its sign-in is bound (tenant_kept)
    return code


async def _retire(paths: AppPaths, previous: TenantProfile, profile: TenantProfile) -> None:
    """The sign-in the profile had before it changed (another client ID of the same tenant): revoked at the
    tenant and cleared, now that the new one works. A slot the new sign-in uses is not touched."""
    from tenant_events.http import api_client
    from tenant_events.tenant.sign_in import TenantSignIn, open_secret_store

    store = (await asyncio.to_thread(open_secret_store)).store
    async with api_client() as http:
        old = TenantSignIn(previous, store, lambda: http, paths.data_dir)
        if old.slot.key == TenantSignIn(profile, store, lambda: http, paths.data_dir).slot.key:
            return
        problem = await old.sign_out()
    if problem is not None:
        print(
            f"tenant-events: the earlier sign-in of {previous.name} was removed here but not revoked: {problem}",
            file=sys.stderr,
        )


async def _check(profile: TenantProfile) -> None:
    from tenant_events.tenant.sign_in import check_tenant

    await check_tenant(profile.auth_url, "--auth-url")


def _callbacks_line(profile: TenantProfile) -> str:
    urls = " ".join(callback_urls(profile))
    if profile.redirect_ports:
        return f"Callback URL(s) to allow for client {profile.client_id}: {urls}"
    return (
        f"Callback URL to allow for client {profile.client_id}: {urls} (any port; a tenant that matches the "
        f"port exactly, like Auth0, needs a fixed one: --port {DEFAULT_CALLBACK_PORT} and "
        f"http://127.0.0.1:{DEFAULT_CALLBACK_PORT}/callback)"
    )


async def _logout(
    paths: AppPaths, profile: TenantProfile, browser: bool, return_to: str | None = None
) -> None:
    from tenant_events.tenant.link import TenantLink
    from tenant_events.tenant.sign_in import open_in_browser, open_secret_store
    from tenant_events.tenant.sources import of_profile

    store = (await asyncio.to_thread(open_secret_store)).store
    async with TenantLink(profile.name, paths, of_profile(profile, store)) as link:
        problem = await link.sign_out()  # RFC 7009 revoke, then forget the keyring entry whatever happens
        if problem is not None:
            # Offline: the token is forgotten locally all the same; say that the tenant could not be told.
            print(
                f"tenant-events: removed the local sign-in; could not revoke it at the tenant: {problem}",
                file=sys.stderr,
            )
            return
        if browser:
            url = await link.logout_url(return_to)
            print(url, flush=True)
            open_in_browser(url)


def run_logout(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir).ensure()
    setup_logging(paths.log_dir, stderr=False)
    profile = load_settings(paths).tenant(args.tenant)
    return_to = args.return_to
    if return_to is not None:
        if not args.browser:
            raise ConfigError("--return-to", "only makes sense with --browser")
        try:
            check_url(return_to)
        except InsecureURLError as exc:
            raise ConfigError("--return-to", str(exc)) from None
    asyncio.run(_logout(paths, profile, args.browser, return_to))
    print(f"Signed out of {profile.name}; events and cursor are kept.", flush=True)
    return 0
