"""A real local HTTP server that answers only OIDC discovery, for CLI tests that never reach the token step
(timeout, port in use). Anything else gets 404."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve_discovery() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    document = json.dumps(
        {
            "issuer": base + "/",
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/oauth/token",
            "jwks_uri": base + "/.well-known/jwks.json",
            "code_challenge_methods_supported": ["S256"],
        }
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path == "/.well-known/openid-configuration"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(document if ok else b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        server.shutdown()
        server.server_close()
