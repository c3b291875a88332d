"""`gpu-advisor serve --http` for real: Granian workers, signed requests, and the round-trip benchmark."""

from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_slack import (
    SIGNING_SECRET,
    FakeSlack,
    assert_valid_message,
    get,
    post,
    signed_headers,
    slash_command_body,
)

CLIENTS = 50
REQUESTS = 400


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(loaded_engine):
    slack = FakeSlack().start()
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": loaded_engine.url.render_as_string(hide_password=False),
           "SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
           "SLACK_API_URL": slack.api_url, "LOG_LEVEL": "WARNING"}
    env.pop("SLACK_CLIENT_ID", None)
    process = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "gpu-advisor"), "serve", "--http", "--port", str(port), "--workers", "2", "--threads", "16"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(process.stdout.read().decode() if process.stdout else "server did not start")
            time.sleep(0.2)
        yield port, slack
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        slack.stop()


def test_http_server_answers_signed_commands_and_refuses_forged_ones(served) -> None:
    port, slack = served
    body = slash_command_body("compare H100 vs H200", response_url=slack.response_url("one"))
    assert post(port, body, signed_headers(body))[0] == 200
    slack.wait_for(lambda calls: any(c.path == "/response/one" for c in calls), timeout_s=20)
    assert_valid_message(slack.responses()[0].params)
    forged = slash_command_body("h100", response_url=slack.response_url("forged"))
    assert post(port, forged, signed_headers(forged, secret="wrong"))[0] == 401
    assert get(port, "/slack/install")[0] == 404  # no OAuth configured: single-workspace token


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def test_slash_command_round_trip_benchmark(served, backend) -> None:
    """Prints p50/p99 of the ack (HTTP 200) and of the full round trip (card at the response URL)."""
    port, slack = served
    texts = ["fine-tune 13B with QLoRA on a budget", "price 4090", "compare H100 vs H200", "specs L40S"]

    def one(i: int) -> tuple[str, float, float]:
        name = f"b{i}"
        body = slash_command_body(texts[i % len(texts)], response_url=slack.response_url(name))
        headers = signed_headers(body)
        started = time.perf_counter()
        status, text = post(port, body, headers)
        assert status == 200, text
        return name, started, time.perf_counter() - started

    for i in range(20):  # warm up both workers
        one(-1 - i)
    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(one, range(REQUESTS)))
    slack.wait_for(lambda calls: len([c for c in calls if c.path.startswith("/response/b") and not c.path.startswith("/response/b-")]) >= REQUESTS, timeout_s=120)
    arrived = {c.path.removeprefix("/response/"): c.at for c in slack.responses()}
    acks = [elapsed * 1000 for _, _, elapsed in results]
    trips = [(arrived[name] - started) * 1000 for name, started, _ in results]
    print(f"\n[{backend}] {REQUESTS} signed /gpu commands, {CLIENTS} concurrent clients, Granian 2 workers x 16 threads, "
          f"{os.cpu_count()} CPUs: ack p50 {statistics.median(acks):.1f} ms p99 {_percentile(acks, 99):.1f} ms; "
          f"card at response_url p50 {statistics.median(trips):.1f} ms p99 {_percentile(trips, 99):.1f} ms")


GRANDCHILD_MB = 80

def test_bench_peak_rss_counts_the_answer_workers(tmp_path) -> None:
    """bench's server RSS is the largest of master, web workers AND their answer workers (grandchildren)."""
    from bot.bench.http_load import Served

    script = tmp_path / "server_like.py"
    script.write_text(
        "import subprocess, sys, threading, time\n"
        "def answer_worker():  # started from a thread, as a gthread worker starts its answer processes\n"
        f"    subprocess.Popen([sys.executable, '-c', \"b = b'x' * ({GRANDCHILD_MB} << 20); import time; time.sleep(60)\"])\n"
        "if sys.argv[1:] == ['worker']:\n"
        "    threading.Thread(target=answer_worker).start()\n"
        "else:\n"
        "    subprocess.Popen([sys.executable, __file__, 'worker'])\n"
        "time.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    served = Served(0, process, 0.0)
    try:
        deadline = time.monotonic() + 30
        while served.peak_rss_mb() < GRANDCHILD_MB and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(served.worker_pids()) == 2  # the web worker and its answer worker
        assert served.peak_rss_mb() >= GRANDCHILD_MB
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the group we started: master, worker, answer worker
        process.wait(5)
