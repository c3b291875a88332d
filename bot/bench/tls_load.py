"""What a Slack call costs over HTTPS with a new TLS context per connection, and with one shared context.

A local HTTPS server stands in for Slack (a certificate made here, signed by a CA made here). The client
trusts the system's CA bundle plus that CA (`SSL_CERT_FILE` names a copy of the bundle with it appended), so
building a default context reads as many certificates as it does against Slack. Each call is slack_sdk's
`WebClient.chat_postMessage`, a new connection each time, as urllib makes them.

    python -m bot.bench.tls_load [calls]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import ssl
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypedDict

SYSTEM_BUNDLE = Path(ssl.get_default_verify_paths().cafile or "/etc/ssl/certs/ca-certificates.crt")


class TlsTiming(TypedDict):
    calls: int
    new_context_ms_p50: float  # per call, ssl=None: urllib builds a default context per connection
    shared_context_ms_p50: float  # per call, one context for the process (bot.tls)
    saved_ms_per_call: float
    bundle_certificates: int


def _certificates(workdir: Path) -> tuple[Path, Path, Path]:
    """A CA and a localhost certificate it signed (cert, key, CA cert), written to `workdir`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpu-advisor bench CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path, ca_path = workdir / "cert.pem", workdir / "key.pem", workdir / "ca.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path, ca_path


class _Slack(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"ok": True, "channel": "C1", "ts": "1.2"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        return


@contextmanager
def https_slack(workdir: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTPS Slack Web API; yields its API URL and a CA bundle (the system's + ours) that trusts it."""
    cert, key, ca = _certificates(workdir)
    bundle = workdir / "bundle.pem"
    bundle.write_bytes((SYSTEM_BUNDLE.read_bytes() if SYSTEM_BUNDLE.is_file() else b"") + b"\n" + ca.read_bytes())
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slack)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}/api/", bundle
    finally:
        server.shutdown()
        server.server_close()


def time_calls(calls: int = 40) -> TlsTiming:
    """`calls` posts with a new context per connection, then `calls` with one shared context; medians."""
    from slack_sdk import WebClient

    with tempfile.TemporaryDirectory() as tmp, https_slack(Path(tmp)) as (url, bundle):
        saved = os.environ.get("SSL_CERT_FILE")
        os.environ["SSL_CERT_FILE"] = str(bundle)  # read by every default context made from here on
        try:
            shared = ssl.create_default_context()
            per: dict[str, list[float]] = {"new": [], "shared": []}
            for kind, context in (("new", None), ("shared", shared)) * 2:  # alternated, twice each
                client = WebClient(token="xoxb-bench", base_url=url, ssl=context, retry_handlers=[])
                for _ in range(calls // 2):
                    started = time.perf_counter()
                    client.chat_postMessage(channel="C1", text="x")
                    per[kind].append((time.perf_counter() - started) * 1000)
        finally:
            if saved is None:
                os.environ.pop("SSL_CERT_FILE", None)
            else:
                os.environ["SSL_CERT_FILE"] = saved
        count = bundle.read_text(encoding="utf-8", errors="replace").count("BEGIN CERTIFICATE")
    new, one = statistics.median(per["new"]), statistics.median(per["shared"])
    return TlsTiming(calls=len(per["new"]) + len(per["shared"]), new_context_ms_p50=round(new, 2),
                     shared_context_ms_p50=round(one, 2), saved_ms_per_call=round(new - one, 2),
                     bundle_certificates=count)


if __name__ == "__main__":
    from bot.bench.machine import describe

    result = time_calls(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
    print(json.dumps({"machine": describe(), "tls": result}, indent=2))
