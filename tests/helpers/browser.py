"""Act as the user's browser on the simulator's login page.

`act_as_browser(authorize_url)` GETs the authorize URL, submits the login form with the chosen button, and
then delivers the result to the app's redirect URI exactly as a browser would (GET for the default query
mode, POST for response_mode=form_post), so the app's real loopback listener receives it. It returns the
redirect URL carrying `code`/`state` (or `error`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx


class _Forms(HTMLParser):
    """Collects forms: action, method, hidden inputs and submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, object]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(
                {
                    "action": a.get("action", ""),
                    "method": a.get("method", "get").lower(),
                    "fields": {},
                    "buttons": [],
                }
            )
        elif self.forms and tag == "input" and a.get("type") == "hidden":
            self.forms[-1]["fields"][a.get("name", "")] = a.get("value", "")  # type: ignore[index]
        elif self.forms and tag == "button" and a.get("name"):
            self.forms[-1]["buttons"].append((a["name"], a.get("value", "")))  # type: ignore[attr-defined]


def parse_forms(html: str) -> list[dict[str, object]]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


def login_redirect(
    authorize_url: str, action: str = "allow", *, client: httpx.Client | None = None
) -> httpx.Response:
    """Open the login page and press a button; the simulator's reply (302, or 200 form_post page)."""
    own = client is None
    client = client or httpx.Client(timeout=10)
    try:
        page = client.get(authorize_url, follow_redirects=False)
        if page.status_code != 200 or "<form" not in page.text:
            return page  # an error page, or an immediate redirect (prompt=none)
        forms = parse_forms(page.text)
        assert len(forms) == 1, f"expected one login form, got {len(forms)}"
        form = forms[0]
        buttons = dict(form["buttons"])  # type: ignore[arg-type]
        assert buttons.get("action") is not None and ("action", action) in form["buttons"], (  # type: ignore[operator]
            f"no button action={action!r} on the login page"
        )
        target = urljoin(authorize_url, str(form["action"]))
        data = {**form["fields"], "action": action}  # type: ignore[dict-item]
        return client.post(target, data=data, follow_redirects=False)
    finally:
        if own:
            client.close()


def act_as_browser(authorize_url: str, action: str = "allow", *, deliver: bool = True) -> str:
    """Log in (or cancel) and deliver the result to the redirect URI; returns the redirect URL."""
    with httpx.Client(timeout=10) as client:
        reply = login_redirect(authorize_url, action, client=client)
        if reply.status_code in (302, 303):
            location = reply.headers["location"]
            if deliver:
                client.get(location, follow_redirects=True)
            return location
        if reply.status_code == 200 and "<form" in reply.text:  # response_mode=form_post
            form = parse_forms(reply.text)[0]
            fields = dict(form["fields"])  # type: ignore[call-overload]
            action_url = str(form["action"])
            if deliver:
                client.post(action_url, data=fields, follow_redirects=True)
            return str(httpx.URL(action_url, params=fields))
        raise AssertionError(f"login page answered {reply.status_code}: {reply.text[:300]}")


@dataclass(frozen=True)
class CliLogin:
    """What `tenant-events login --no-browser` did while `act_as_browser` played the user's browser."""

    url: str  # the authorization URL (the command's first stdout line)
    final: str  # the redirect URL the browser delivered (code/state or error)
    out: str
    err: str
    returncode: int


def cli_login(
    auth_url: str,
    client_id: str,
    data_dir: str,
    *extra: str,
    env: dict[str, str] | None = None,
    action: str = "allow",
) -> CliLogin:
    """Run `tenant-events login --no-browser` as a user would and finish it in the (test's) browser."""
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"} if env is None else env
    login = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "login",
            "--no-browser",
            "--auth-url",
            auth_url,
            "--client-id",
            client_id,
            "--data-dir",
            data_dir,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert login.stdout is not None
    timer = threading.Timer(60, login.kill)
    timer.start()
    with login:  # its pipes are closed (and it is waited for) even when the browser part fails
        try:
            url = login.stdout.readline().strip()
            if not url.startswith(("http://", "https://")):  # it failed first: say so in its own words
                if login.poll() is None:
                    login.kill()
                out, err = login.communicate(timeout=60)
                printed = "\n".join((url, out)).strip()
                raise AssertionError(
                    f"`tenant-events login` printed no sign-in URL first (exit code {login.returncode}):\n"
                    f"stdout: {printed[-2000:]}\nstderr: {err[-4000:]}"
                )
            final = act_as_browser(url, action)
            out, err = login.communicate(timeout=60)
        finally:
            timer.cancel()
            if login.poll() is None:
                login.kill()
    return CliLogin(url, final, out, err, login.returncode)
