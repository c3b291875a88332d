"""The one check of a Slack request at the HTTP edge: its size, then its signature, then its shape.

Order (DESIGN §8): a body over MAX_BODY_BYTES is refused with 413 before any signature work; a
missing, forged or stale signature gets 401; only a signed body is parsed, exactly as Bolt will parse
it, and checked against the slices Bolt and our listeners read. A body that is not what Slack sends
(not an object, nested past any Slack payload, a field of the wrong type, a command without its user)
is refused with 400 and a one-line warning. A refused request changes nothing: no listener runs, no
row is written, Slack is not called. `screen` does all three; the ack path (front.py) and Bolt's WSGI
adapter (wsgi.py) both call it.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from pydantic import ValidationError
from wsgiref.types import WSGIEnvironment

from bot.slack.shapes import first_problem, model_for

log = logging.getLogger(__name__)

# Slack's payloads are a few KB; a block_actions payload carries the whole message (at most 50 blocks
# of 3,000 characters) and stays well under 1 MiB.
MAX_BODY_BYTES = 1 << 20
# Slack's deepest payloads (rich text inside lists inside quotes in a message in a block_actions
# payload) nest about 20 levels; the JSON parser itself would stop near 1,000 with a RecursionError.
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refused request: HTTP status line and the reason (logged, and the response body)."""

    status: str
    reason: str


def refuse(status: str, reason: str) -> Refusal:
    return Refusal(status, reason)


UNSIGNED = Refusal("401 Unauthorized", "invalid request")
MAX_AGE_S = 5 * 60  # Slack's replay window
_TIMESTAMP = re.compile(r"[0-9]{1,12}")  # ASCII digits only: "²".isdigit() is True and int("²") raises


@dataclass(frozen=True, slots=True)
class Screened:
    """A signed request Bolt can act on: the raw text, the parsed body, and the content type."""

    text: str
    body: dict[str, Any]
    content_type: str


def screen(environ: WSGIEnvironment, *, signing_secret: str, now: float | None = None) -> Screened | Refusal:
    """Size (413), signature (401), shape (400), in that order; a refusal is logged in one line.

    On success the body is put back in `environ` (wsgi.input), so Bolt's adapter can read it again.
    """
    raw = read_body(environ)
    if isinstance(raw, Refusal):
        return _logged(raw)
    timestamp = str(environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", ""))
    signature = str(environ.get("HTTP_X_SLACK_SIGNATURE", ""))
    if not is_signed(raw, secret=signing_secret, timestamp=timestamp, signature=signature, now=now):
        return UNSIGNED  # not logged as a problem of ours: anyone can send one
    content_type = str(environ.get("CONTENT_TYPE", ""))
    body = check_body(raw, content_type)
    if isinstance(body, Refusal):
        return _logged(body)
    environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(raw), str(len(raw))
    return Screened(raw.decode("utf-8"), body, content_type)


def is_signed(raw: bytes, *, secret: str, timestamp: str, signature: str, now: float | None = None) -> bool:
    """Slack's v0 signature: HMAC-SHA256 of `v0:{timestamp}:{raw body}`, at most five minutes old.

    Computed over the bytes as received (slack_sdk's verifier decodes them first, which raises on a
    body that is not UTF-8, and compares str, which raises on a non-ASCII signature header).
    """
    if not (secret and _TIMESTAMP.fullmatch(timestamp)):
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > MAX_AGE_S:
        return False
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(f"v0={digest}".encode(), signature.encode("utf-8", "replace"))


def _logged(refusal: Refusal) -> Refusal:
    log.warning("refused a Slack request (%s): %s; nothing done", refusal.status, refusal.reason)
    return refusal


# --- size, before anything else -------------------------------------------------------------------------


def read_body(environ: WSGIEnvironment) -> bytes | Refusal:
    """The raw body, or 413 when it is larger than Slack sends (read no further), 411/400 when unsized."""
    declared = environ.get("CONTENT_LENGTH")
    if declared in (None, ""):
        if not environ.get("wsgi.input_terminated"):  # no length and no end we can trust: do not read
            return refuse("411 Length Required", "no Content-Length")
        raw = bytes(environ["wsgi.input"].read(MAX_BODY_BYTES + 1))
        return refuse("413 Content Too Large", _too_large(len(raw))) if len(raw) > MAX_BODY_BYTES else raw
    try:
        length = int(str(declared))
    except ValueError:
        return refuse("400 Bad Request", "Content-Length is not a number")
    if length < 0:
        return refuse("400 Bad Request", "Content-Length is negative")
    if length > MAX_BODY_BYTES:
        return refuse("413 Content Too Large", _too_large(length))
    return bytes(environ["wsgi.input"].read(length)) if length else b""


def _too_large(length: int) -> str:
    return f"body of {length:,} bytes is over the {MAX_BODY_BYTES:,}-byte limit"


class Unreadable(ValueError):
    """A body (or its `payload` field) that is not JSON, or nested deeper than any Slack payload."""


def parse_slack_body(text: str, content_type: str) -> tuple[object, str]:
    """The body as Bolt parses it (slack_bolt.request.internals.parse_body) and what it came from
    ("body", or a form's "payload"); `Unreadable` when that is not JSON.

    JSON when the content type says so or the body starts with `{`; else a form whose `payload` field,
    when the body mentions one, is JSON; else the form fields (the last of a repeated name wins).
    """
    if not text:
        return {}, "body"
    if content_type.split(";")[0].strip() == "application/json" or text.startswith("{"):
        return _loads(text, "body"), "body"
    if "payload" in text:
        payload = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
        return ({}, "body") if payload is None else (_loads(payload, "payload"), "payload")
    return dict(parse_qsl(text, keep_blank_values=True)), "body"


def _loads(text: str, where: str) -> object:
    if _depth(text) > MAX_DEPTH:
        raise Unreadable(f"{where} is JSON nested more than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:
        raise Unreadable(f"{where} is JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise Unreadable(f"{where} is not JSON ({error.msg})") from None
    except ValueError:  # an integer of more than 4,300 digits (Python's int conversion limit)
        raise Unreadable(f"{where} is not JSON Slack sends (a number too long)") from None


def check_body(raw: bytes, content_type: str) -> dict[str, Any] | Refusal:
    """The body as Bolt will see it when it is a Slack request it can act on; else a 400 `Refusal`."""
    try:
        body, where = parse_slack_body(raw.decode("utf-8"), content_type)
    except UnicodeDecodeError as error:
        return refuse("400 Bad Request", f"body is not UTF-8 (byte {error.start})")
    except Unreadable as error:
        return refuse("400 Bad Request", str(error))
    if not isinstance(body, dict):
        return refuse("400 Bad Request", f"{where} is a JSON {_json_kind(body)}, not an object")
    model = model_for(body)
    if model is None:
        return refuse("400 Bad Request", "neither an event, a command nor an interaction")
    try:
        model.model_validate(body)
    except ValidationError as error:
        return refuse("400 Bad Request", first_problem(error))
    return body


def _json_kind(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _depth(text: str) -> int:
    """How deep `[`/`{` nest outside strings; cheap (C speed) when the text has few brackets."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def response(refusal: Refusal) -> tuple[str, str, bytes]:
    """Status, content type and body of the HTTP answer to a refused request."""
    return refusal.status, "text/plain; charset=utf-8", refusal.reason.encode()
