"""Faults through the HTTP app: hostile text on the real pipeline, PostgreSQL connections killed under load."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fake_slack import (
    BOT_USER_ID,
    FakeCore,
    FakeSlack,
    Harness,
    assert_valid_message,
    start_harness,
)
from sqlalchemy import create_engine, text

from bot.slack.core import PipelineCore, snapshot_holder

# One sample per script (Unicode script names), plus what people paste: emoji, bidi controls, joiners.
SCRIPTS = ("Latin ÀÉÎÕÜ ß", "Greek αβγ", "Cyrillic жщы", "Armenian աբգ", "Hebrew שלום", "Arabic مرحبا",
           "Devanagari नमस्ते", "Bengali বাংলা", "Tamil தமிழ்", "Thai สวัสดี", "Georgian ქართ", "Hangul 한국어",
           "Hiragana ひらがな", "Katakana カタカナ", "Han 汉字漢字", "Ethiopic ሰላም", "Tibetan བོད", "Khmer ខ្មែរ",
           "Sinhala සිංහල", "Mongolian ᠮᠣᠩ", "emoji 🚀👩‍💻🇰🇷", "bidi \u202eevil\u202c zwj a\u200db")
PINGS = ("<!channel>", "<!here>", "<!everyone>", "<!subteam^S0TEAM|@gpu-team>", f"<@{BOT_USER_ID}>",
         "<@U0ALICE>", "<#C0GENERAL>")
HOSTILE = {
    "long": "fine-tune 13B with QLoRA " + "x" * 10_000,
    "long_words": " ".join(["H100"] * 2_500),
    "control": "h100\x00\x01\x07\x08\x1b[31m price\x7f\r\n\t\x0b\x0c\u0085",
    "mrkdwn": "price 4090 " + " ".join(PINGS) + " *bold* _it_ ~s~ `code` ```block``` <https://evil.example|click> &amp; &lt;",
    "scripts": "price h100 " + " ".join(SCRIPTS),
    "only_pings": " ".join(PINGS),
    "lone_surrogate_escaped": "h100 \\ud800 price",
    "json_looking": '{"blocks": [{"type": "section"}], "text": "<!channel>"}',
}
LATENCY_BUDGET_MS = 3000  # Slack's own limit for the ack


@pytest.fixture
def real(loaded_engine: Any) -> Iterator[Harness]:
    slack = FakeSlack().start()
    snapshots = snapshot_holder(loaded_engine)
    server = start_harness(loaded_engine, slack, PipelineCore(snapshots), snapshots)
    yield Harness(slack, None, server, loaded_engine)  # type: ignore[arg-type]
    server.stop()
    slack.stop()


def _mrkdwn_texts(params: dict[str, Any]) -> list[str]:
    """Every string Slack renders (the fallback and each text object), not button values or ids."""
    found: list[str] = [params.get("text", "")]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
                found.append(node["text"])
            for key, value in node.items():
                if key != "value":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(params.get("blocks", []))
    return found


def test_hostile_text_gets_a_clear_answer_once_and_pings_nobody(real: Harness) -> None:
    def send(item: tuple[str, str]) -> tuple[str, int, float]:
        name, question = item
        started = time.perf_counter()
        status, _ = real.command(question, name=name)
        return name, status, (time.perf_counter() - started) * 1000

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(send, HOSTILE.items()))
    assert {status for _, status, _ in results} == {200}
    assert max(ms for _, _, ms in results) < LATENCY_BUDGET_MS
    wanted = {f"/response/{name}" for name in HOSTILE}
    real.slack.wait_for(lambda calls: wanted <= {c.path for c in calls}, timeout_s=30)
    responses = real.slack.quiet(0.5)
    assert Counter(c.path for c in responses if c.path.startswith("/response/")) == Counter({p: 1 for p in wanted})
    for call in responses:
        if not call.path.startswith("/response/"):
            continue
        assert_valid_message(call.params)
        rendered = "\n".join(_mrkdwn_texts(call.params))
        for ping in ("<!channel", "<!here", "<!everyone", "<!subteam", "<@U", "<#C"):
            assert ping not in rendered, (call.path, ping)
        assert "\x00" not in rendered and "\x1b" not in rendered, call.path
        assert "Traceback" not in rendered and "Error:" not in rendered, call.path
        assert len(json.dumps(call.params, ensure_ascii=False)) < 40_000, call.path  # Slack's message limits


def _terminate_others(url: str, stop: threading.Event, killed: list[int]) -> None:
    """Like a server restart, repeatedly: every other connection to the database is cut."""
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        while not stop.wait(0.3):
            with admin.connect() as conn:
                killed.append(len(conn.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")).all()))
    finally:
        admin.dispose()


def _send(h: Harness, i: int) -> int:
    if i % 2:
        ts = f"1700000100.{i:06d}"
        event = {"type": "app_mention", "user": f"U0P{i % 5}", "text": f"<@{BOT_USER_ID}> q{i}", "ts": ts,
                 "channel": "C0GENERAL", "event_ts": ts}
        return h.event(event, event_id=f"EvPg{i}")[0]
    return h.command(f"q{i}", user=f"U0P{i % 5}", name=f"pg{i}")[0]


def _outcomes(calls: list[Any], numbers: range) -> dict[int, list[str]]:
    """Per request number: what reached the user (answer, or the error notice), in order."""
    out: dict[int, list[str]] = {i: [] for i in numbers}
    for c in calls:
        if c.path.startswith("/response/pg"):
            i = int(c.path.removeprefix("/response/pg"))
            out.setdefault(i, []).append("answer" if f"q{i}" in c.params.get("text", "") else "notice")
        elif c.method == "chat.postMessage" and c.status == 200:
            out.setdefault(int(c.params["thread_ts"].split(".")[1]), []).append("answer")
        elif c.method == "chat.postEphemeral":
            out.setdefault(-1, []).append("notice")
    return out


def test_postgres_connections_terminated_under_load_lose_and_double_nothing(engine: Any, backend: str) -> None:
    """Requests keep coming while every other connection is killed (as in a restart); then the app reconnects."""
    if backend != "postgres":
        pytest.skip("pg_terminate_backend is a PostgreSQL fault")
    slack, core = FakeSlack().start(), FakeCore()
    server = start_harness(engine, slack, core)
    h = Harness(slack, core, server, engine)
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_terminate_others,
                              args=(engine.url.render_as_string(hide_password=False), stop, killed))
    try:
        killer.start()
        with ThreadPoolExecutor(5) as pool:
            during = list(pool.map(lambda i: _send(h, i), range(30)))
        stop.set()
        killer.join(10)
        with ThreadPoolExecutor(5) as pool:  # after the "restart": everything must work again
            after = list(pool.map(lambda i: _send(h, i), range(100, 120)))
        after_done = {f"/response/pg{i}" for i in range(100, 120, 2)}
        try:  # bounded wait for the after-restart answers, then for stragglers
            slack.wait_for(lambda calls: after_done <= {c.path for c in calls}, timeout_s=20)
        except AssertionError:
            pass  # the assertions below say what is missing
        calls = slack.quiet(1.5)
    finally:
        stop.set()
        server.stop()
        slack.stop()
    assert sum(killed) > 0, "the fault never happened: no backend was terminated"
    assert set(during) == set(after) == {200}
    outcomes = _outcomes(calls, range(30))
    notices = outcomes.pop(-1, [])
    lost = [i for i, got in outcomes.items() if i < 30 and not got and i % 2 == 0]
    doubled = {i: got for i, got in outcomes.items() if len(got) > 1}
    print(f"\n{sum(killed)} backends terminated; during: {sum(1 for i in range(30) if outcomes.get(i) == ['answer'])}"
          f"/30 answered, {len(notices)} event error notices, command notices "
          f"{sum(1 for i in range(0, 30, 2) if outcomes.get(i) == ['notice'])}")
    assert all(outcomes.get(i) == ["answer"] for i in range(100, 120)), {i: outcomes.get(i) for i in range(100, 120)}
    assert lost == [] and doubled == {}  # every command got exactly one reply (answer or error notice)
    silent = [i for i in range(1, 30, 2) if not outcomes.get(i)]
    if len(silent) > len(notices):
        pytest.xfail(f"finding: mentions {silent} hit a killed connection and nobody was told (the error handler "
                     "reads the user's language from the same dead database); no retry of the failed transaction")
