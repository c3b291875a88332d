"""A minimal local fake of the Slack Web API for digest tests: records posts, serves history, injects faults.

Implements chat.postMessage (with message metadata), conversations.history (include_all_metadata),
conversations.open, and the three steps of files_upload_v2 (files.getUploadURLExternal, the upload itself to
the URL it hands out, files.completeUploadExternal): `state.files` holds each completed upload with its bytes. Faults: per-channel errors (`not_in_channel`, `is_archived`), revoked tokens,
N leading 429s with Retry-After, and a hang after recording a post (the message is in Slack, the
poster never hears back: what a crash between "posted" and "recorded" looks like).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class FakeSlackState:
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    channel_errors: dict[str, str] = field(default_factory=dict)
    revoked_tokens: set[str] = field(default_factory=set)
    rate_limit_next: int = 0  # answer this many calls with 429 first
    hang_after_post_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    ts_counter: int = 0
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # file id → name, length, bytes once uploaded
    files: list[dict[str, Any]] = field(default_factory=list)  # completed uploads: channel, thread_ts, title, bytes
    base_url: str = ""

    def posts(self, channel: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if channel is None or m["channel"] == channel]


class _Handler(BaseHTTPRequestHandler):
    state: FakeSlackState

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _args(self) -> dict[str, Any]:
        url = urlparse(self.path)
        args: dict[str, Any] = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if body:
            if "json" in (self.headers.get("Content-Type") or ""):
                args.update(json.loads(body))
            else:
                args.update({k: v[0] for k, v in parse_qs(body).items()})
        auth = self.headers.get("Authorization") or ""
        args["_token"] = auth.removeprefix("Bearer ").strip() or args.get("token", "")
        return args

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        path = urlparse(self.path).path
        if path.startswith("/upload/"):  # step 2 of files_upload_v2: raw bytes to the URL step 1 handed out
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            file_id = path.rsplit("/", 1)[-1]
            with self.state.lock:
                known = file_id in self.state.pending
                if known:
                    self.state.pending[file_id]["bytes"] = data
            raw = f"OK - {len(data)}".encode()
            self.send_response(200 if known else 404)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            return
        self._dispatch()

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        try:
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a test's timeout): nothing to answer, nothing to print

    def _dispatch(self) -> None:
        method = urlparse(self.path).path.rsplit("/", 1)[-1]
        args = self._args()
        st = self.state
        with st.lock:
            st.calls.append((method, args))
            if st.rate_limit_next > 0:
                st.rate_limit_next -= 1
                self._send(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
                return
        if args["_token"] in st.revoked_tokens or not args["_token"]:
            self._send(200, {"ok": False, "error": "token_revoked" if args["_token"] else "not_authed"})
            return
        channel = str(args.get("channel", ""))
        if channel in st.channel_errors:
            self._send(200, {"ok": False, "error": st.channel_errors[channel]})
            return
        handler = getattr(self, "api_" + method.replace(".", "_"), None)
        if handler is None:
            self._send(200, {"ok": False, "error": "unknown_method"})
            return
        handler(args)

    def api_chat_postMessage(self, args: dict[str, Any]) -> None:
        st = self.state
        with st.lock:
            st.ts_counter += 1
            ts = f"{int(time.time())}.{st.ts_counter:06d}"
            metadata = args.get("metadata")
            if isinstance(metadata, str):
                metadata = json.loads(metadata)
            msg = {"channel": args["channel"], "ts": ts, "text": args.get("text"), "blocks": args.get("blocks"),
                   "metadata": metadata}
            st.messages.append(msg)
        if st.hang_after_post_s:
            time.sleep(st.hang_after_post_s)  # posted, but the caller does not hear back in time
        self._send(200, {"ok": True, "channel": args["channel"], "ts": ts, "message": msg})

    def api_conversations_history(self, args: dict[str, Any]) -> None:
        include = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        msgs = [dict(m) for m in reversed(self.state.posts(args["channel"]))]
        oldest = float(args.get("oldest") or 0)
        msgs = [m for m in msgs if float(m["ts"]) >= oldest]
        if not include:
            for m in msgs:
                m.pop("metadata", None)
        self._send(200, {"ok": True, "messages": msgs, "has_more": False})

    def api_files_getUploadURLExternal(self, args: dict[str, Any]) -> None:
        st = self.state
        with st.lock:
            file_id = f"F{len(st.pending) + 1:06d}"
            st.pending[file_id] = {"filename": args.get("filename"), "length": int(args.get("length") or 0)}
        self._send(200, {"ok": True, "upload_url": f"{st.base_url}upload/{file_id}", "file_id": file_id})

    def api_files_completeUploadExternal(self, args: dict[str, Any]) -> None:
        st = self.state
        files = args.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        done = []
        with st.lock:
            for f in files:
                pending = st.pending.get(f["id"], {})
                if "bytes" not in pending:
                    self._send(200, {"ok": False, "error": "file_not_found"})
                    return
                record = {"id": f["id"], "title": f.get("title"), "filename": pending.get("filename"),
                          "channel": args.get("channel_id"), "thread_ts": args.get("thread_ts"),
                          "bytes": pending["bytes"]}
                st.files.append(record)
                done.append({"id": f["id"], "title": f.get("title")})
        self._send(200, {"ok": True, "files": done})

    def api_conversations_open(self, args: dict[str, Any]) -> None:
        self._send(200, {"ok": True, "channel": {"id": "D" + str(args.get("users", "U"))}})


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-response is expected in timeout tests; don't print a traceback."""


class FakeSlack:
    """Run the fake on a free local port: `with FakeSlack() as slack: slack.url`."""

    def __init__(self) -> None:
        self.state = FakeSlackState()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/"
        self.state.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeSlack:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
