"""The bench result as a terminal report: machine, figures, budgets, hot spots."""

from __future__ import annotations

from bot.bench.result import BenchProfiles, BenchResult, BudgetRow, MachineInfo


def _machine(m: MachineInfo) -> str:
    return (f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, Python {m['python']}, {m['os']}, "
            f"load average {m['load_avg']} before, {m.get('load_avg_after', '?')} after"
            + (f", reference workload {m['reference_ms']} ms CPU" if "reference_ms" in m else "")
            + (f", rule engine {m['engine']}" if "engine" in m else ""))


def _figures(r: BenchResult) -> list[str]:
    lines = []
    for key, a in (("answer_ms", r.get("answer_ms")), ("answer_ms_100k", r.get("answer_ms_100k"))):
        if a is not None:
            lines.append(f"{key:<16} p50 {a['p50']:8.2f} ms  p99 {a['p99']:8.2f} ms  "
                         f"(CPU p50 {a.get('cpu_p50', 0.0):.2f} / p99 {a.get('cpu_p99', 0.0):.2f} ms; "
                         f"{a['requests']} requests, {a['offers']:,} offers)")
    for level, h in (r.get("http") or {}).items():
        lines.append(f"http.{level:<11} {h['rps']:7.1f} req/s  p50 {h['p50_ms']:7.1f} ms  p99 {h['p99_ms']:7.1f} ms  "
                     f"(card at response_url p99 {h['card_p99_ms']} ms; delivered {h['delivered']}/{h['requests']}, "
                     f"doubled {h['doubled']}, errors {h['errors']}; CPU per request: load generator "
                     f"{h.get('client_cpu_ms_per_request', '?')} ms, web processes {h.get('server_cpu_ms_per_request', '?')} ms)")
    queue = r.get("queue") or {}
    kill = queue.get("kill9")
    if kill:
        lines.append(f"queue.kill9       accepted {kill['accepted']}  answered {kill['answered']}  doubled {kill['doubled']}")
        for name, k in kill["backends"].items():
            lines.append(f"  {name:<15} sent {k['sent']}, accepted {k['accepted']}, answered {k['answered']}, "
                         f"doubled {k['doubled']}, refused by the killed web process {k['refused']}, re-run {k['rerun']}, "
                         f"uncertain {k['uncertain']}, drained in {k['drain_s']} s")
    for name, t in (queue.get("throughput") or {}).items():
        lines.append(f"queue.{name:<17} {t['answers_per_s']:6.1f} answers/s  {t['acks_per_s']:6.1f} acks/s  ack p50 "
                     f"{t['ack_p50_ms']} p99 {t['ack_p99_ms']} ms  card p50 {t['card_p50_ms']} p99 {t['card_p99_ms']} ms  "
                     f"per answer {t['per_answer']}")
    for skipped in queue.get("skipped") or ():
        lines.append(f"queue skipped: {skipped}")
    for key, value, unit in (
        ("digest_100k_s", r.get("digest_100k_s"), "s"), ("digest_1m_s", r.get("digest_1m_s"), "s"),
        ("start_s", r.get("start_s"), "s"),
        ("start_http_s", r.get("start_http_s"), "s"), ("rss_mb", r.get("rss_mb"), "MB"),
        ("rss_bench_mb", r.get("rss_bench_mb"), "MB"), ("setup_s", r.get("setup_s"), "s"),
    ):
        if value is not None:
            lines.append(f"{key:<16} {value} {unit}")
    return lines


def _budgets(rows: list[BudgetRow]) -> list[str]:
    lines = ["", "budgets (DESIGN §8):"]
    for b in rows:
        value = "-" if b["value"] is None else f"{b['value']:g} {b['unit']}"
        lines.append(f"  {b['verdict']:<12} {b['what']:<36} {value:>12}  (limit {b['limit']:g} {b['unit']})")
    return lines


def _profiles(profiles: BenchProfiles) -> list[str]:
    lines = []
    for name, rows in profiles.items():
        lines.append(f"\nhot spots: {name}")
        for row in rows[:12] if isinstance(rows, list) else ():
            if isinstance(row, dict):
                cells = "  ".join(f"{k}={v}" for k, v in row.items())
                lines.append(f"  {cells}")
            else:
                lines.append(f"  {row}")
    return lines


def text_report(result: BenchResult) -> str:
    lines = [_machine(result["machine"]), *_figures(result), *_budgets(result.get("budgets", []))]
    lines += _profiles(result.get("profiles") or {})
    return "\n".join(lines)
