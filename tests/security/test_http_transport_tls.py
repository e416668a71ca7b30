"""The HTTP transport verifies TLS by default (also after Delivery hardens it), and the documented authentication
settings (API key, custom headers, a private CA) reach a real HTTPS server."""
from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no default trust store knows."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "server.pem", directory / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def https_server(tmp_path):
    """An HTTPS lineage endpoint recording each request's headers and body."""
    cert, key = self_signed(tmp_path)
    received: list[tuple[dict[str, str], dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((dict(self.headers), json.loads(body)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", cert, received
    httpd.shutdown()
    httpd.server_close()


def event() -> Any:
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

    return RunEvent(eventType=RunState.COMPLETE, eventTime="2026-01-01T00:00:00.000Z",
                    run=Run(runId="0190f3a4-8d2b-7c3e-9a41-2b6c4d5e6f70"), job=Job(namespace="ns", name="tls"),
                    producer="https://example.com/tls-test")


def configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: dict) -> None:
    path = tmp_path / "openlineage.yml"
    path.write_text(yaml.safe_dump({"transport": transport}))
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(path))


def test_tls_is_verified_by_default(https_server, tmp_path, monkeypatch):
    url, _cert, received = https_server
    configure(tmp_path, monkeypatch, {"type": "http", "url": url, "retry": {"total": 0}})  # nothing about TLS
    client = make_client()
    delivery = Delivery(client, Settings().updated({"spool.path": str(tmp_path / "spool")}))
    assert client.transport.verify is True
    result = delivery.emit(event())
    assert (result.status, result.error) == ("spooled", "SSLError: SSLError")
    assert received == []
    delivery.close()


def test_api_key_custom_headers_and_private_ca(https_server, tmp_path, monkeypatch):
    """docs/delivery.md's configuration: an API key (sent as a bearer token), extra headers, and a private CA bundle."""
    url, cert, received = https_server
    configure(tmp_path, monkeypatch, {
        "type": "http", "url": url, "endpoint": "api/v1/lineage",
        "auth": {"type": "api_key", "apiKey": "the-api-key"},
        "custom_headers": {"X-Tenant": "analytics"},
        "sslContext": {"caCertPath": str(cert)},
    })
    client = make_client()
    delivery = Delivery(client, Settings().updated({"spool.path": str(tmp_path / "spool")}))
    assert delivery.emit(event()).status == "delivered"
    delivery.close()
    (headers, body), = received
    assert headers["Authorization"] == "Bearer the-api-key"
    assert headers["X-Tenant"] == "analytics"
    assert body["job"]["name"] == "tls"
