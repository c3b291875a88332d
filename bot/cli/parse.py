"""`gpu-advisor parse TEXT [--json]`: show what the parser understood (and `-` for JSON Lines)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.cli.context import Subparsers


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("parse", help="show how a question is understood (intent, model, GPUs, budget ...)")
    p.add_argument("text", help="the question, or - to read one per line (JSON Lines out)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_parse)


def cmd_parse(args: argparse.Namespace) -> int:
    from bot.cli.context import open_context, run_each
    from bot.parse import ask_to_dict, parse

    snapshot = open_context().snapshot()

    def answer(text: str) -> dict[str, Any]:
        return ask_to_dict(parse(text, snapshot=snapshot))

    return run_each(args.text, args.json, answer, show_parsed)


def show_parsed(result: dict[str, Any]) -> str:
    """Readable lines: only the fields that were filled, in the JSON order."""
    lines = []
    for key, value in result.items():
        if key == "gpus":
            for gpu in value:
                shown = gpu["name"] or gpu["id"] or ", ".join(gpu["candidates"]) or "?"
                lines.append(f"gpu: {shown} ({gpu['status']})")
        elif key == "budget":
            parts = [f"{k}={v}" for k, v in value.items() if v is not None]
            if parts:
                lines.append("budget: " + " ".join(parts))
        elif key == "model" and value:
            lines.append(f"model: {value['name'] or value['id']} ({value['params_b']}B)")
        elif key == "assumed" and value:
            lines.extend(f"assumed {k}: {v}" for k, v in value.items())
        elif key == "ignored" and value:
            lines.append("ignored: " + "; ".join(value))
        elif value not in (None, [], {}) and key not in ("model", "assumed", "ignored"):
            lines.append(f"{key}: {value}")
    return "\n".join(lines)
