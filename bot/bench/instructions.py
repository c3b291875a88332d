"""Instructions per answer, counted by Valgrind's callgrind: a yardstick for the answer path that does not move
with the host.

The shared 2-core hosts run the same code at speeds that differ by 25 % within an hour and by 2-4x between days
(docs/BENCHMARKS.md), so a change worth 3 % cannot be seen in milliseconds without many interleaved runs. The
instructions the CPU executes for one answer do not depend on the host's speed or load: with the hash seed fixed,
two runs of the same code count the same to within a few hundred instructions per answer. This is not a budget
(DESIGN §8 budgets are milliseconds on the host at hand); it says whether a change made answering cheaper, and for
which requests.

    python -m bot.bench.instructions [--offers 10000] [--limit N] [--top 10] [--json]

runs the bundled corpus once to warm every cache (as `time_answers` does), then each request once more inside
`functools.reduce`, the one C function callgrind is told to count in and dump after (nothing on the answer path
calls it once templates are compiled), so each request's count is its own. Valgrind runs Python 50-100x slower:
the whole corpus takes several minutes.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bot.bench.answers import NOW, Request, load_corpus, percentile

_MARKER = "functools_reduce"  # callgrind's name for functools.reduce (Modules/_functoolsmodule.c)
_TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


def _inner(db: str, offers: int, limit: int | None, out: str) -> None:
    """Under callgrind: warm up, then answer each request inside functools.reduce (one dump each)."""
    from sqlmodel import create_engine

    from bot.answer.pipeline import answer
    from bot.bench.offers import scaled_snapshot
    from knowledge.snapshot import load_snapshot

    snapshot = scaled_snapshot(load_snapshot(create_engine(f"sqlite:///{db}")), offers)
    corpus = load_corpus()[:limit]
    for request in corpus:
        answer(request.text, snapshot=snapshot, now=NOW)

    def one(_: object, request: Request) -> object:
        return answer(request.text, snapshot=snapshot, now=NOW)

    for request in corpus:
        functools.reduce(one, (request,), None)
    Path(out).write_text(json.dumps([[r.lang, r.text] for r in corpus], ensure_ascii=False), encoding="utf-8")


def read_counts(directory: Path, stem: str, expected: int) -> list[int]:
    """The instructions of the last `expected` dumps `<stem>.1`, `<stem>.2` ... in the order they were written.

    The last ones are the measured requests: start-up calls functools.reduce a few times (SQLAlchemy, Jinja's
    preprocessing) before them; the dump callgrind writes at exit is `<stem>` itself, without a number."""
    dumps = sorted((p for p in directory.glob(f"{stem}.*") if p.suffix[1:].isdigit()), key=lambda p: int(p.suffix[1:]))
    counts = [int(m.group(1)) for p in dumps if (m := _TOTALS.search(p.read_text(encoding="utf-8")))]
    if len(counts) < expected:
        raise SystemExit(f"expected {expected} callgrind dumps, found {len(counts)}")
    return counts[len(counts) - expected:]


def count(offers: int = 10_000, limit: int | None = None, top: int = 10) -> dict[str, object]:
    """Instructions per request over the corpus (p50, p99, mean, max, the heaviest requests) and the tool's version."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed: this count needs Valgrind's callgrind (apt install valgrind)")
    from knowledge.setup import prepare_database

    with tempfile.TemporaryDirectory(prefix="gpu-advisor-instructions-") as tmp:
        db = Path(tmp) / "bench.db"
        prepare_database(f"sqlite:///{db}").dispose()
        requests = Path(tmp) / "requests.json"
        command = [valgrind, "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={_MARKER}",
                   f"--dump-after={_MARKER}", f"--callgrind-out-file={tmp}/cg.out",
                   sys.executable, "-m", "bot.bench.instructions", "--inner", str(db), str(offers),
                   str(limit or 0), str(requests)]
        done = subprocess.run(command, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True,
                              check=False)
        if done.returncode != 0 or not requests.exists():
            raise SystemExit(f"callgrind run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        texts = [text for _, text in json.loads(requests.read_text(encoding="utf-8"))]
        counts = read_counts(Path(tmp), "cg.out", len(texts))
        version = subprocess.run([valgrind, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    per = sorted(zip(counts, texts, strict=True), reverse=True)
    return {
        "requests": len(counts), "offers": offers, "valgrind": version,
        "p50": percentile([float(c) for c in counts], 50), "p99": percentile([float(c) for c in counts], 99),
        "mean": round(sum(counts) / len(counts)), "max": per[0][0],
        "heaviest": [[c, t] for c, t in per[:max(top, 10)]],
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--inner"]:
        _inner(args[1], int(args[2]), int(args[3]) or None, args[4])
        return 0
    parser = argparse.ArgumentParser(prog="python -m bot.bench.instructions", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--offers", type=int, default=10_000, help="offers in the scaled snapshot (default 10,000)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests of the corpus")
    parser.add_argument("--top", type=int, default=10, help="heaviest requests to list (default 10)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    opts = parser.parse_args(args)
    result = count(opts.offers, opts.limit, opts.top)
    if opts.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    print(f"{result['valgrind']}, {result['requests']} requests, {result['offers']:,} offers")
    print(f"instructions per answer: p50 {result['p50']:,.0f}  p99 {result['p99']:,.0f}  "
          f"mean {result['mean']:,}  max {result['max']:,}")
    heaviest = result["heaviest"]
    assert isinstance(heaviest, list)
    for instructions, text in heaviest[: opts.top]:
        print(f"  {instructions:>12,}  {text[:90]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
