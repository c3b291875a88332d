"""One TLS context for the connections a process makes to Slack.

With no context given, urllib (and so slack_sdk's clients) and http.client make a new default one for every
connection, which reads the system's CA bundle again: a Slack call took 47.6 ms with a new context per
connection against 3.2 ms with one shared (`python -m bot.bench.tls_load`, docs/BENCHMARKS.md "One TLS context
per process"), where answering the question costs ~3 ms. A context
may be shared by connections and threads; it is made on first use, so a process that never calls Slack (the
web processes of HTTP mode without OAuth) never pays for it.
"""

from __future__ import annotations

import functools
from ssl import SSLContext, create_default_context


@functools.cache
def slack_tls_context() -> SSLContext:
    """The system's default verification settings and CAs, loaded once per process."""
    return create_default_context()
