"""Fixtures of the hub tests: a nats-server with the documented accounts and a TLS block (its own throwaway CA),
and a NATS impostor that never asks for TLS."""

from __future__ import annotations

import datetime
import ipaddress
import shutil
from collections.abc import Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from helpers.nats_hub import CONFIG_DIR, Credentials, NatsNode, free_port
from helpers.nats_impostor import Impostor, running_impostor


def _certificate(subject: str, key, issuer_cert=None, issuer_key=None, ca: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_cert.subject if issuer_cert else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    return builder.sign(issuer_key or key, hashes.SHA256())


@pytest.fixture
def tls_hub(tmp_path):
    """hub.conf's accounts with a tls block: a CA, and a server certificate for 127.0.0.1 signed by it."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("Tenant Events test CA", ca_key, ca=True)
    cert = _certificate("127.0.0.1", key, ca, ca_key)
    pem = serialization.Encoding.PEM
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp_path / "server.pem").write_bytes(cert.public_bytes(pem))
    (tmp_path / "server.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    port, monitor = free_port(), free_port()
    config = tmp_path / "tls.conf"
    config.write_text(
        f'listen: "127.0.0.1:{port}"\nhttp: "127.0.0.1:{monitor}"\n'
        f'jetstream {{ store_dir: "{tmp_path / "store"}" }}\n'
        f'tls {{ cert_file: "{tmp_path / "server.pem"}", key_file: "{tmp_path / "server.key"}" }}\n'
        'include "./accounts.conf"\n'
    )
    shutil.copy(CONFIG_DIR / "accounts.conf", tmp_path / "accounts.conf")  # includes are relative to the file
    creds = Credentials()
    node = NatsNode("tls", config, creds.env(), port, monitor, tmp_path)
    node.start()
    node.wait_healthy()
    try:
        yield node, creds, tmp_path / "ca.pem"
    finally:
        node.stop()


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    with running_impostor() as fake:
        yield fake
