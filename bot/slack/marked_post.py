"""One HTTP request to Slack whose "delivering" mark is written when only the request's body is left to send.

An answer worker marks its request "delivering" just before the answer leaves (bot.slack.guard): a worker
killed after the mark is never run again, because the message may be in Slack already and a second post
would show it twice. A worker killed after the mark but before the message left loses that answer. So the
connection is opened and the request line and headers are sent first; then the mark; then the body, one
`sendall`. A worker killed before the body leaves leaves Slack an incomplete request, which shows nothing.
Measured on loopback: ~0.55 ms from the mark to the server having the request when the mark came before
slack_sdk's client built and sent it; now one `sendall` of the body (docs/BENCHMARKS.md, "`queue.kill9`").

Plain `http.client` (the standard library's, which urllib and so slack_sdk's clients use underneath): it lets
the head and the body be sent apart, which neither urllib nor slack_sdk's clients expose.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.message import Message
from ssl import SSLContext
from urllib.parse import urlsplit

from bot.tls import slack_tls_context


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    reason: str
    headers: Message  # http.client.HTTPMessage, as urllib's responses carry them
    body: bytes


def exchange(url: str, body: bytes, headers: Iterable[tuple[str, str]], *, mark: Callable[[], None],
             ssl: SSLContext | None, timeout_s: float | None, method: str = "POST") -> Reply:
    """Send `body` to `url` with `headers` (Host and Content-Length are added), calling `mark()` once the request
    line and headers are out and before the body is; the reply read whole. `mark` may raise: nothing complete
    was sent then, and the connection is closed."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout_s, context=ssl or slack_tls_context())
    elif parts.scheme == "http":
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)
    else:
        raise ValueError(f"not an HTTP URL: {parts.scheme}")
    try:
        conn.putrequest(method, target, skip_accept_encoding=True)
        for name, value in headers:
            if name.lower() not in ("host", "content-length"):
                conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()  # connects, then sends the request line and headers
        mark()
        conn.send(body)
        reply = conn.getresponse()
        return Reply(reply.status, reply.reason, reply.msg, reply.read())
    finally:
        conn.close()
