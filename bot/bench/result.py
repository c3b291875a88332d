"""The bench result document (`gpu-advisor bench --json`): each part's figures, as TypedDicts.

`bot.cli.bench.run_bench` fills a BenchResult part by part; `bot.bench.budgets` judges it and
`bot.bench.report` prints it. The key names are the JSON's and do not change.
"""

from __future__ import annotations

from typing import NotRequired, Required, TypedDict


class MachineInfo(TypedDict):
    """What the figures depend on; the load average says how busy the machine was while measuring."""

    cpu: str
    cores: int | None
    ram_gb: float | None
    python: str
    os: str
    load_avg: list[float]
    load_avg_after: NotRequired[list[float]]
    reference_ms: NotRequired[float]  # a fixed pure-Python workload's CPU time: the host's speed
    engine: NotRequired[str]  # "compiled" (mypyc, setup.py) or "source": how the rule engine ran


class AnswerTimes(TypedDict):
    """In-process answers over the corpus: ms per request (wall clock, the budget's figure, and the thread's CPU
    time, which other work on a shared machine moves much less), and the card kinds seen."""

    p50: float
    p99: float
    max: float
    cpu_p50: float
    cpu_p99: float
    requests: int
    offers: int
    kinds: dict[str, int]


class CorpusInfo(TypedDict):
    requests: int
    languages: list[str]


class AskTiming(TypedDict):
    """`gpu-advisor ask` from exec to answer: median and best of the runs, and the peak memory."""

    median_s: float
    best_s: float
    runs: int
    peak_rss_mb: float
    bytecode: bool  # every project module had current bytecode (startup.ensure_bytecode)


class LevelResult(TypedDict):
    """One concurrency level of signed `/gpu` commands: acks per second and ms, cards delivered, and the CPU
    time per request of the load generator (the bench process) and of the web processes (master and HTTP
    workers, not the answer worker) over the timed window, which follows a warm-up at the same level."""

    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    delivered: int
    undelivered: int
    doubled: int
    card_p50_ms: float
    card_p99_ms: float
    client_cpu_ms_per_request: float
    server_cpu_ms_per_request: float
    warmup_requests: int  # sent first at the same concurrency and not timed (the level's first wave)
    warmup_p99_ms: float


class HttpRun(TypedDict):
    """The HTTP part: each level by name ("c1", "c10", "c50"), and the server's start time and peak memory."""

    levels: dict[str, LevelResult]
    server_start_s: float
    server_rss_mb: float


class Kill9Result(TypedDict):
    """A burst with a web process and a worker SIGKILLed mid-way: every accepted request answered once?"""

    backend: str  # sqlite, postgres+redis
    sent: int
    accepted: int  # HTTP 200 (the ack Slack waits for)
    refused: int  # connection reset by the killed web process: Slack shows the user an error
    answered: int  # accepted requests whose card arrived
    doubled: int  # requests whose card arrived more than once
    answered_unaccepted: int  # cards for requests the client saw fail (stored before the web process died)
    drain_s: float  # from the end of the burst until the last card
    uncertain: int  # deliveries whose worker died mid-send (closed, never sent twice)
    failed: int  # requests answered with an error notice after every attempt
    rerun: int  # requests that took more than one attempt (a killed worker's, a 429's)


class ThroughputResult(TypedDict):
    """2 web processes and N workers on one machine: acks and answers per second, and server load per answer."""

    backend: str
    web: int
    workers: int
    requests: int
    answered: int
    undelivered: int
    acks_per_s: float
    answers_per_s: float
    ack_p50_ms: float
    ack_p99_ms: float
    card_p50_ms: float
    card_p99_ms: float
    per_answer: dict[str, float]  # pg_commits, pg_rows_written, pg_rows_read, redis_commands


class Kill9Summary(TypedDict):
    """`queue.kill9`: the SIGKILL run summed over the backends it ran on, and each backend's own figures."""

    accepted: int
    answered: int
    doubled: int
    lost_or_doubled: int  # accepted - answered + doubled: the budget (0)
    backends: dict[str, Kill9Result]  # "sqlite", "postgres+redis"


class QueueRun(TypedDict, total=False):
    """`queue`: the fault run, throughput per backend and worker count, what was skipped and why."""

    kill9: Kill9Summary
    throughput: dict[str, ThroughputResult]  # "sqlite.w1", "postgres+redis.w2", ...
    skipped: list[str]


class DigestTiming(TypedDict):
    """compute_digest + render_digest over the filled history: seconds, and what it found."""

    median_s: float
    best_s: float
    observations: int
    gpus_reported: int
    changes: int


class BudgetRow(TypedDict):
    """One DESIGN §8 budget: the measured value against its limit."""

    budget: str
    what: str
    value: float | None
    limit: float
    unit: str
    verdict: str  # "pass", "miss" or "not measured"


class ProfileRow(TypedDict):
    """One function under cProfile: calls, own and cumulative milliseconds."""

    where: str
    calls: int
    own_ms: float
    cumulative_ms: float


class StartProfileRow(TypedDict):
    """One function of a profiled `gpu-advisor ask` in a fresh interpreter."""

    where: str
    calls: int
    cumulative_ms: float


class ImportTime(TypedDict):
    """One module of `python -X importtime`: its name, nesting depth and cumulative import time."""

    module: str
    depth: int
    cumulative_ms: float


class BenchProfiles(TypedDict, total=False):
    """Hot spots of the budgets that were missed (only those parts appear)."""

    answer: list[ProfileRow]
    answer_own_time: list[ProfileRow]
    answer_slowest: list[tuple[float, str]]
    start: list[StartProfileRow]
    start_imports: list[ImportTime]


class BenchResult(TypedDict, total=False):
    """The whole document; a part that was not run leaves its keys out."""

    machine: Required[MachineInfo]
    setup_s: float
    start_s: float
    start_detail: AskTiming
    answer_ms: AnswerTimes
    answer_ms_100k: AnswerTimes
    corpus: CorpusInfo
    start_http_s: float
    http: dict[str, LevelResult]
    digest_100k_s: float
    digest_detail: DigestTiming
    digest_1m_s: float
    digest_1m_detail: DigestTiming
    queue: QueueRun
    rss_mb: float | None
    rss_bench_mb: float
    budgets: list[BudgetRow]
    profiles: BenchProfiles
