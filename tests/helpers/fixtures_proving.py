"""Proving-ground helpers: tiny hostile HTTP(S) servers on loopback addresses and a self-signed certificate.

The servers are plain sockets in a thread so a test controls every byte the app receives: a redirect to
another host, a self-signed TLS handshake, a response that never ends. Each records what it was sent so a
test can assert that no token reached it.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed_cert(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """Write a self-signed certificate valid for `host` (and localhost); returns (cert, key) paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "evil self-signed")])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host)), x509.DNSName("localhost")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(san, critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@dataclass
class RawServer:
    """A one-response-per-connection HTTP server; `requests` holds the raw request heads it received. With no
    `response` it answers nothing and keeps every connection open (`held`): each one a stalled server."""

    host: str
    port: int
    response: bytes | None
    tls: ssl.SSLContext | None = None
    requests: list[bytes] = field(default_factory=list)
    held: list[socket.socket] = field(default_factory=list)
    handshake_errors: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"


def _serve(server: RawServer, sock: socket.socket, stop: threading.Event) -> None:
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            conn, _ = sock.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        if server.response is None:
            server.held.append(conn)
            continue
        with conn:
            conn.settimeout(5)
            try:
                stream: socket.socket = server.tls.wrap_socket(conn, server_side=True) if server.tls else conn
            except (ssl.SSLError, OSError) as exc:
                server.handshake_errors.append(str(exc))
                continue
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = stream.recv(65536)
                    if not chunk:
                        break
                    head += chunk
                server.requests.append(head)
                stream.sendall(server.response)
            except (ssl.SSLError, OSError):
                pass


@contextmanager
def raw_server(host: str, response: bytes | None, tls: ssl.SSLContext | None = None) -> Iterator[RawServer]:
    """Serve `response` to every connection on host:random-port until the block ends (None: hold them)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    sock.listen(16)
    server = RawServer(host, sock.getsockname()[1], response, tls)
    stop = threading.Event()
    thread = threading.Thread(target=_serve, args=(server, sock, stop), name=f"raw-{host}", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(5)
        sock.close()
        for conn in server.held:
            conn.close()


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


def http_response(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [
        f"HTTP/1.1 {status}",
        *(f"{k}: {v}" for k, v in headers.items()),
        f"Content-Length: {len(body)}",
        "Connection: close",
        "",
        "",
    ]
    return "\r\n".join(lines).encode() + body


__all__ = ["RawServer", "http_response", "raw_server", "self_signed_cert", "tls_context"]
