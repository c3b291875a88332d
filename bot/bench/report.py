"""The bench result as a terminal report: machine, figures, budgets, hot spots."""

from __future__ import annotations

from typing import Any


def _machine(m: dict[str, Any]) -> str:
    return (f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, Python {m['python']}, {m['os']}, "
            f"load average {m['load_avg']} before, {m.get('load_avg_after', '?')} after")


def _figures(r: dict[str, Any]) -> list[str]:
    lines = []
    for key in ("answer_ms", "answer_ms_100k"):
        if key in r:
            a = r[key]
            lines.append(f"{key:<16} p50 {a['p50']:8.2f} ms  p99 {a['p99']:8.2f} ms  "
                         f"({a['requests']} requests, {a['offers']:,} offers)")
    for level, h in (r.get("http") or {}).items():
        lines.append(f"http.{level:<11} {h['rps']:7.1f} req/s  p50 {h['p50_ms']:7.1f} ms  p99 {h['p99_ms']:7.1f} ms  "
                     f"(card at response_url p99 {h['card_p99_ms']} ms; delivered {h['delivered']}/{h['requests']}, "
                     f"doubled {h['doubled']}, errors {h['errors']})")
    for key, unit in (("digest_100k_s", "s"), ("start_s", "s"), ("start_http_s", "s"), ("rss_mb", "MB"),
                      ("rss_bench_mb", "MB"), ("setup_s", "s")):
        if r.get(key) is not None:
            lines.append(f"{key:<16} {r[key]} {unit}")
    return lines


def _budgets(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["", "budgets (DESIGN §8):"]
    for b in rows:
        value = "-" if b["value"] is None else f"{b['value']:g} {b['unit']}"
        lines.append(f"  {b['verdict']:<12} {b['what']:<36} {value:>12}  (limit {b['limit']:g} {b['unit']})")
    return lines


def _profiles(profiles: dict[str, Any]) -> list[str]:
    lines = []
    for name, rows in profiles.items():
        lines.append(f"\nhot spots: {name}")
        for row in rows[:12]:
            if isinstance(row, dict):
                cells = "  ".join(f"{k}={v}" for k, v in row.items())
                lines.append(f"  {cells}")
            else:
                lines.append(f"  {row}")
    return lines


def text_report(result: dict[str, Any]) -> str:
    lines = [_machine(result["machine"]), *_figures(result), *_budgets(result.get("budgets", []))]
    lines += _profiles(result.get("profiles") or {})
    return "\n".join(lines)
