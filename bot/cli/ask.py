"""`gpu-advisor ask TEXT`: the whole pipeline (parse → engine → card) in a terminal, as Slack JSON, or a preview link."""

from __future__ import annotations

import json
import argparse
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from bot.render.views import BuyingRow, CapacityRow
    from bot.answer.reply import Reply
    from bot.cli.context import Subparsers
    from knowledge.snapshot import Snapshot

BLOCK_KIT_BUILDER = "https://app.slack.com/block-kit-builder/#"


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("ask", help="ask a question as you would in Slack; prints the answer card")
    p.add_argument("text", help="the question, or - to read one question per line (JSON Lines out)")
    p.add_argument("--lang", default=None, help="answer in this language (en, zh-Hans, ko, ja, es, de, fr, vi)")
    p.add_argument("--json", action="store_true",
                   help='print {"text", "blocks"} as sent to Slack, plus "parsed" and "result" (README: ask --json)')
    p.add_argument("--preview-url", action="store_true", help="print a Block Kit Builder link to see the card")
    p.set_defaults(handler=cmd_ask)


def preview_url(blocks: Iterable[Mapping[str, object]]) -> str:
    """A Block Kit Builder link showing `blocks` (the builder reads a URL-encoded {"blocks": [...]})."""
    payload = json.dumps({"blocks": list(blocks)}, ensure_ascii=False, separators=(",", ":"))
    return BLOCK_KIT_BUILDER + quote(payload, safe="")


def answer_json(reply: Reply, snapshot: Snapshot) -> dict[str, object]:
    """`parsed` (the `parse --json` object) and `result` (the `estimate --json` object, advice only; else null);
    `capacity` for a capacity card."""
    from bot.parse.ask import ask_to_dict
    from rules.serialize import verdict_to_json

    out: dict[str, object] = {
        "parsed": ask_to_dict(reply.ask) if reply.ask is not None else None,
        "result": verdict_to_json(reply.verdict, snapshot.gpus) if reply.verdict is not None else None,
    }
    if reply.capacity is not None:  # "what can I run on my 4090?": one running verdict per model
        out["capacity"] = [capacity_row_json(row) for row in reply.capacity]
    if reply.buying is not None:  # "which GPU should I buy for local LLMs?": the cards of the ladder
        out["buying"] = [buying_row_json(row) for row in reply.buying]
    return out


def buying_row_json(row: BuyingRow) -> dict[str, object]:
    """One card of the buying ladder: its price (what kind and when) and the largest model it runs."""
    return {"gpu": {"id": row.gpu_id, "name": row.gpu}, "vram_gb": row.vram_gb, "usd": row.usd,
            "price_basis": row.price_basis, "price_date": row.price_when, "model": row.model_id,
            "name": row.model, "params_b": row.params_b, "precision": row.precision, "needed_gib": row.needed_gib,
            "has_gib": row.has_gib, "output_tokens_per_s_per_user": round(row.tokens_per_s, 2),
            "context_tokens": row.context_tokens}


def capacity_row_json(row: CapacityRow) -> dict[str, object]:
    """One model's verdict on the named hardware, with the keys of `pinned` where they mean the same."""
    return {"model": row.model_id, "name": row.model, "params_b": row.params_b, "fits": row.fits,
            "precision": row.precision, "needed_gib": row.needed_gib, "has_gib": row.has_gib,
            "offload_gib": row.offload_gib, "output_tokens_per_s_per_user": row.tokens_per_s,
            "context_tokens": row.context_tokens}


def cmd_ask(args: argparse.Namespace) -> int:
    from bot.answer.pipeline import answer
    from bot.cli.context import CliError, open_context, print_json, read_queries

    snapshot = open_context().snapshot()
    lines = args.text == "-"
    status = 0
    for query in read_queries(args.text):
        text = query.text
        reply = answer(text, snapshot=snapshot, lang=args.lang, now=datetime.now(UTC))
        if args.json or lines:
            out: dict[str, object] = {**reply.message(), **answer_json(reply, snapshot)}
            if lines:
                out = {"question": text, "language": reply.language, "kind": reply.kind, **out}
            if query.note:
                out["input_note"] = query.note
            if args.preview_url:
                out["preview_url"] = preview_url(reply.blocks)
            try:
                print_json(out, indent=None if lines else 1, flush=lines)
            except CliError as error:
                if not lines:
                    raise
                print_json({"question": text, "error": str(error)}, flush=True)
                status = 1
        else:
            sys.stdout.write(reply.terminal())
            if args.preview_url:
                print(preview_url(reply.blocks))
    return status
