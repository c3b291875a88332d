"""A Slack request as the queue keeps it, and the id Slack gave it (the dedupe key)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs

HTTP, SOCKET_MODE = "http", "socket_mode"


@dataclass(frozen=True, slots=True)
class Job:
    """One verified Slack request, exactly as received: raw body (HTTP) or JSON payload (Socket Mode)."""

    body: str
    headers: Mapping[str, str] = field(default_factory=dict)
    mode: str = HTTP
    # The body already parsed by whoever checked it (the ack path parses it to check its shape); parsed
    # again from `body` when None. Not stored: the worker parses the stored text itself.
    fields: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Identity:
    key: str  # team + kind + Slack's id: equal for Slack's retries of one request
    team_id: str
    kind: str  # event, command, action, other


def parse_body(job: Job) -> Mapping[str, object]:
    """The request body as a dict: JSON events, form commands, or a form-wrapped JSON `payload`."""
    if job.mode == SOCKET_MODE or job.headers.get("content-type", "").startswith("application/json"):
        data = json.loads(job.body)
        return dict(data) if isinstance(data, dict) else {}
    form = {key: values[0] for key, values in parse_qs(job.body).items()}
    if "payload" in form:
        data = json.loads(form["payload"])
        return dict(data) if isinstance(data, dict) else {}
    return form


def _team(body: Mapping[str, object]) -> str:
    team = body.get("team_id") or body.get("team")
    if isinstance(team, Mapping):
        team = team.get("id")
    if not team:
        auths = body.get("authorizations")
        if isinstance(auths, list) and auths and isinstance(auths[0], Mapping):
            team = auths[0].get("team_id")
    return str(team or "")


def identify(job: Job, body: Mapping[str, object] | None = None) -> Identity:
    """Slack's own id of the request: event_id for events, trigger_id for commands and buttons."""
    if body is None:
        body = parse_body(job) if job.fields is None else job.fields
    team = _team(body)
    if body.get("event_id"):
        return Identity(f"{team}:ev:{body['event_id']}", team, "event")
    if body.get("command") and body.get("trigger_id"):
        return Identity(f"{team}:cmd:{body['trigger_id']}", team, "command")
    if body.get("type") and body.get("trigger_id"):
        return Identity(f"{team}:act:{body['trigger_id']}", team, "action")
    digest = hashlib.sha256(job.body.encode("utf-8")).hexdigest()[:32]
    return Identity(f"{team}:body:{digest}", team, "other")
