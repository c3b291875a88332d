"""The queue under load: a SIGKILL fault run (nothing lost, nothing doubled) and throughput with 1 and 2 workers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.bench.answers import percentile
from bot.bench.fake_slack import Slack
from bot.bench.http_load import command_body, drive, request_bytes, signed
from bot.bench.result import Kill9Result, ThroughputResult
from bot.bench.stack import Stack, deployment

KILL_AT_S = 1.5  # into the burst: web process and worker killed with SIGKILL
KILL_RATE_PER_S = 100.0  # the fault run's burst is paced so that it lasts 4 s: the kill lands mid-burst
RESTART_AFTER_S = 0.5
DRAIN_LIMIT_S = 120.0  # a dead worker's claims are re-queued after ~10-15 s; a lost queue entry after 30 s


@dataclass
class Burst:
    accepted: list[tuple[str, float, float]]  # name, sent at, ack ms
    refused: int
    wall_s: float


def send_burst(ports: Sequence[int], slack: Slack, texts: Sequence[str], *, requests: int, clients: int,
               tag: str, at: tuple[float, Callable[[], None]] | None = None, rate_per_s: float | None = None) -> Burst:
    """`requests` signed /gpu commands round-robin over the web ports, as fast as `clients` can send them or
    paced at `rate_per_s`; `at` = (seconds, action) runs mid-burst (in a thread of its own). The requests are
    built and signed first; one thread sends them (bot.bench.http_load.drive), a new connection each."""
    names = [f"{tag}-{i}" for i in range(requests)]
    payloads = []
    for i, name in enumerate(names):
        body = command_body(texts[i % len(texts)], user=f"U0B{i % 7}", response_url=slack.response_url(name))
        payloads.append(request_bytes(ports[i % len(ports)], body, signed(body)))
    timer = threading.Timer(at[0], at[1]) if at else None
    started = time.perf_counter()
    paced = [started + i / rate_per_s for i in range(requests)] if rate_per_s else None
    if timer:
        timer.start()
    # a request cut by the killed web process counts as refused: Slack shows the user an error
    sent = drive(list(ports), payloads, clients, timeout_s=15, not_before=paced)
    if timer:
        timer.join()
    accepted = [(names[s.index], s.began, s.ms) for s in sent if s.status == 200]
    return Burst(accepted, len(sent) - len(accepted), time.perf_counter() - started)


def _start(stack: Stack, webs: int, workers: int) -> list[int]:
    ports = [stack.start_web() for _ in range(webs)]
    for _ in range(workers):
        stack.start_worker()
    stack.wait_ready()
    return ports


def _warm(ports: Sequence[int], slack: Slack, texts: Sequence[str], workers: int) -> None:
    """Every web process and worker has answered before the clock starts."""
    warm = send_burst(ports, slack, texts, requests=8 * max(1, workers), clients=4, tag="warm")
    slack.wait_for({n for n, _, _ in warm.accepted}, timeout_s=60)


def kill9(kind: str, slack: Slack, texts: Sequence[str], workdir: Path, *, requests: int = 400,
          clients: int = 50) -> Kill9Result:
    """2 web + 2 workers; mid-burst a web process and a worker are SIGKILLed and come back; then count."""
    with deployment(kind, slack.url, workdir) as stack:
        ports = _start(stack, 2, 2)
        _warm(ports, slack, texts, 2)

        def strike() -> None:
            stack.kill_web(0)
            stack.kill_worker(0)
            time.sleep(RESTART_AFTER_S)
            stack.restart_worker(0)

        burst = send_burst(ports, slack, texts, requests=requests, clients=clients, tag=f"k9{kind[:2]}",
                           at=(KILL_AT_S, strike), rate_per_s=KILL_RATE_PER_S)
        names = {n for n, _, _ in burst.accepted}
        started = time.perf_counter()
        missing = slack.wait_for(names, timeout_s=DRAIN_LIMIT_S)
        drained_s = time.perf_counter() - started
        time.sleep(2.0)  # anything sent twice arrives now
        arrived = slack.arrivals()
        sent = {n for n in arrived if n.startswith(f"k9{kind[:2]}-")}
        outcomes = _outcomes(stack)
        return Kill9Result(
            backend=kind, sent=requests, accepted=len(names), refused=burst.refused, answered=len(names - missing),
            doubled=sum(1 for n in sent if len(arrived[n]) > 1), answered_unaccepted=len(sent - names),
            drain_s=round(drained_s, 1), uncertain=outcomes.get("uncertain", 0), failed=outcomes.get("failed", 0),
            rerun=outcomes["rerun"],
        )


def _outcomes(stack: Stack) -> dict[str, int]:
    from sqlalchemy import func, select
    from sqlmodel import col

    from knowledge.db import make_engine
    from knowledge.slack_tables import SlackRequest

    engine = make_engine(stack.database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(col(SlackRequest.outcome), func.count()).group_by(col(SlackRequest.outcome))).all()
            rerun = conn.execute(select(func.count()).where(col(SlackRequest.attempts) > 1)).scalar_one()
    finally:
        engine.dispose()
    found: dict[str, int] = {"rerun": int(rerun)}
    for outcome, n in rows:
        key = "failed" if str(outcome).startswith("failed") else str(outcome)
        found[key] = found.get(key, 0) + int(n)
    return found


def throughput(kind: str, slack: Slack, texts: Sequence[str], workdir: Path, *, workers: int,
               requests: int = 600, clients: int = 50) -> ThroughputResult:
    """2 web processes, `workers` answer workers: a burst, then how fast the cards come, and the load it put
    on the database and Redis per answer."""
    with deployment(kind, slack.url, workdir) as stack:
        ports = _start(stack, 2, workers)
        _warm(ports, slack, texts, workers)
        before = _server_load(stack)
        tag = f"tp{workers}{kind[:2]}"
        burst = send_burst(ports, slack, texts, requests=requests, clients=clients, tag=tag)
        names = {n for n, _, _ in burst.accepted}
        missing = slack.wait_for(names, timeout_s=DRAIN_LIMIT_S)
        arrived = slack.arrivals()
        load = _server_load(stack)
        first = min(t for _, t, _ in burst.accepted)
        cards = sorted(arrived[n][0] for n in names if n in arrived)
        acks = [ms for _, _, ms in burst.accepted]
        trips = [(arrived[n][0] - t) * 1000 for n, t, _ in burst.accepted if n in arrived]
        answered = len(cards)
        span = (cards[-1] - first) if cards else 0.0
        per_answer = {k: round((load[k] - before.get(k, 0)) / max(1, answered), 2) for k in load}
        return ThroughputResult(
            backend=kind, web=2, workers=workers, requests=len(names), answered=answered,
            undelivered=len(missing), acks_per_s=round(len(acks) / burst.wall_s, 1),
            answers_per_s=round(answered / span, 1) if span else 0.0, ack_p50_ms=round(percentile(acks, 50), 1),
            ack_p99_ms=round(percentile(acks, 99), 1), card_p50_ms=round(percentile(trips, 50), 1),
            card_p99_ms=round(percentile(trips, 99), 1), per_answer=per_answer,
        )


def _server_load(stack: Stack) -> dict[str, float]:
    """Counters of the servers behind the deployment: commits and rows written, Redis commands."""
    out: dict[str, float] = {}
    if stack.database_url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(stack.database_url.replace("+psycopg", "")) as conn:
            row = conn.execute("SELECT xact_commit, tup_inserted + tup_updated + tup_deleted, tup_returned + "
                               "tup_fetched FROM pg_stat_database WHERE datname = current_database()").fetchone()
            conn.execute("SELECT pg_stat_clear_snapshot()")
        if row:
            out.update(pg_commits=float(row[0]), pg_rows_written=float(row[1]), pg_rows_read=float(row[2]))
    queue_url = stack.env.get("QUEUE_URL", "")
    if queue_url.startswith("redis"):
        from redis import Redis

        info = Redis.from_url(queue_url).info("stats")
        out["redis_commands"] = float(info.get("total_commands_processed", 0))
    return out

