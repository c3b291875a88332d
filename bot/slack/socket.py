"""Socket Mode on the same queue as HTTP: each envelope is stored and queued, then acknowledged."""

from __future__ import annotations

import json
import logging

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.queue.jobs import SOCKET_MODE, Job
from bot.slack.front import Queue

log = logging.getLogger(__name__)


class QueueingSocketModeHandler(SocketModeHandler):
    """Bolt's Socket Mode handler, except that requests go on the answer queue instead of the app.

    The envelope is acknowledged only once the request is stored: an event not acknowledged is
    sent again by Slack (and deduplicated by its id when it arrives twice).
    """

    queue: Queue

    def handle(self, client: BaseSocketModeClient, req: SocketModeRequest) -> None:
        headers = {str(k): str(v) for k, v in (build_headers(req) or {}).items()}
        if self.queue.submit(Job(json.dumps(req.payload), headers, SOCKET_MODE)):
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
        else:
            log.warning("answer queue unavailable: a %s envelope was not acknowledged (Slack retries events)", req.type)
