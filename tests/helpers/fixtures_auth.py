"""Sign-in fixtures: the Node oidc-provider peer (started per module, killed after), a headless browser for it,
in-memory and real secret stores.

The peer needs `tests/peers/node_modules` (`./run test` runs `npm ci` there). Outside the CI session a missing
peer skips with the reason; inside it (TENANT_EVENTS_TEST_SESSION=1) it fails, so CI can't go green without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from tenant_events.auth.secret_store import MemorySecretStore

PEERS = Path(__file__).resolve().parents[1] / "peers"
IN_CI_SESSION = os.environ.get("TENANT_EVENTS_TEST_SESSION") == "1"


def _unavailable(reason: str) -> None:
    if IN_CI_SESSION:
        pytest.fail(f"the Node OIDC peer is required in the CI session: {reason}")
    pytest.skip(reason)


@dataclass
class OidcPeer:
    """A running panva/oidc-provider on 127.0.0.1, configured like Auth0 (tests/peers/oidc_peer.mjs)."""

    auth_url: str
    process: subprocess.Popen[str]
    client_id: str = "desktop-app"
    hs256_client_id: str = "hs256-app"
    output: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)  # drain its pipes until it exits

    @property
    def issuer(self) -> str:
        return self.auth_url

    @property
    def audience(self) -> str:
        return self.auth_url + "/api/v2/"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for reader in self.readers:  # at EOF now that the peer is gone; then its pipes can be closed
            reader.join(5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def act_as_browser(
        self, authorize_url: str, action: str = "allow", login: str = "alice"
    ) -> httpx.Response:
        """Walk the login and consent pages like a user and GET the final redirect against the app's listener.

        `action="deny"` aborts the interaction (access_denied back to the app). Returns the app's response.
        """
        op_netloc = urlsplit(self.auth_url).netloc
        with httpx.Client(follow_redirects=False, timeout=15) as browser:
            response = browser.get(authorize_url)
            for _ in range(20):
                if response.is_redirect:
                    target = urljoin(str(response.url), response.headers["location"])
                    if urlsplit(target).netloc != op_netloc:
                        with httpx.Client(timeout=15) as app:
                            return app.get(target)
                    response = browser.get(target)
                    continue
                path = urlsplit(str(response.url)).path
                match = re.match(r"^/interaction/([^/]+)$", path)
                if response.status_code != 200 or not match:
                    raise AssertionError(
                        f"unexpected page {response.status_code} {response.url}: {response.text[:300]}"
                    )
                if action == "deny":
                    response = browser.get(f"{self.auth_url}{path}/abort")
                    continue
                prompt = re.search(r'name="prompt" value="([a-z]+)"', response.text)
                kind = (
                    prompt.group(1) if prompt else ("login" if 'name="login"' in response.text else "consent")
                )
                form = {"prompt": kind}
                if kind == "login":
                    form |= {"login": login, "password": "any"}
                response = browser.post(f"{self.auth_url}{path}", data=form)
            raise AssertionError("the peer's login never redirected back to the app")


def start_oidc_peer(env: dict[str, str] | None = None) -> OidcPeer:
    node = shutil.which("node")
    if node is None:
        _unavailable("node is not installed")
    if not (PEERS / "node_modules" / "oidc-provider").is_dir():
        _unavailable("tests/peers/node_modules is missing: run `npm ci` in tests/peers (./run test does)")
    process = subprocess.Popen(
        [str(node), "oidc_peer.mjs"],
        cwd=PEERS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {}), "PORT": "0"},
    )
    assert process.stdout is not None and process.stderr is not None
    ready: dict[str, str] = {}
    stderr_lines: list[str] = []

    def drain_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            stderr_lines.append(line)

    stderr_reader = threading.Thread(target=drain_stderr, daemon=True)
    stderr_reader.start()
    timer = threading.Timer(30, process.kill)
    timer.start()
    try:
        line = process.stdout.readline()
    finally:
        timer.cancel()
    if not line:
        process.wait(5)
        stderr_reader.join(5)
        process.stdout.close()
        process.stderr.close()
        raise AssertionError(f"the OIDC peer did not start: {''.join(stderr_lines)[-2000:]}")
    ready = json.loads(line)
    stdout_reader = threading.Thread(target=lambda: [None for _ in process.stdout or []], daemon=True)
    stdout_reader.start()
    return OidcPeer(
        auth_url=ready["issuer"], process=process, output=stderr_lines, readers=[stderr_reader, stdout_reader]
    )


@pytest.fixture(scope="module")
def oidc_peer() -> Iterator[OidcPeer]:
    """One peer per test module (grants are per sign-in, so tests don't share state that matters)."""
    peer = start_oidc_peer()
    try:
        yield peer
    finally:
        peer.stop()


@pytest.fixture
def memory_store() -> MemorySecretStore:
    return MemorySecretStore()
