"""An untrusted TLS certificate is a clear terminal error, not endless "network error" retries."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading

from helpers.fixtures_engine import follow
from tenant_events.stream.states import StreamState
from tenant_events.stream.tokens import StaticTokenProvider


def test_self_signed_server_stops_with_the_certificate_named(tmp_path, db_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    class Fake:
        base_url = f"https://127.0.0.1:{server.server_address[1]}/api/v2"

    try:
        rec = follow(
            Fake(),
            db_path,
            tokens=StaticTokenProvider("t"),
            timeout=20,
            until=lambda r: bool(r.states) and r.states[-1].state.terminal,
        )
    finally:
        server.shutdown()
        server.server_close()
    final = rec.states[-1]
    assert final.state is StreamState.ERROR and final.reason == "untrusted_certificate"
    assert "TLS certificate is not trusted" in final.message and "self-signed" in final.message
