"""One TLS context for the connections a process makes to Slack.

With no context given, urllib (and so slack_sdk's clients) and http.client make a new default one for every
connection, which reads the system's CA bundle again: ~10-40 ms of CPU per Slack call on these hosts
(`ssl.create_default_context()` timed 20 times in a row), more than answering the question costs. A context
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
