"""`python -m bot.locales extract|update|compile|fold FILE…|check|count`: the message catalog's workflow."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.locales import LANGUAGES, read_messages
from bot.locales import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.locales",
        description="The `messages` catalog (bot/locales/<locale>/LC_MESSAGES/messages.po): after changing "
        "message keys in the code, run extract, then update; translators edit the .po files; then compile.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("extract", help="write bot/locales/messages.pot from the code and the templates (babel.cfg)")
    commands.add_parser("update", help="bring every .po to the .pot's keys, then compile")
    commands.add_parser("compile", help="compile every .po to its .mo")
    fold = commands.add_parser(
        "fold", help="add the keys of JSON files in the old shapes (bot/locales/<lang>.json, "
        "bot/digest/locales/<lang>.json, bot/slack/notices.json) to the .po catalogs, and compile")
    fold.add_argument("files", nargs="+", type=Path)
    fold.add_argument("--replace", action="store_true", help="take the file's text where it differs from the catalog's")
    commands.add_parser("check", help="the contract: extraction = .pot = every .po, all translated, same placeholders, .mo current")
    commands.add_parser("count", help="messages per locale")
    args = parser.parse_args(argv)

    if args.command == "extract":
        print(f"messages.pot: {len(build.extract())} keys")
    elif args.command == "update":
        build.update()
    elif args.command == "compile":
        build.compile_all()
    elif args.command == "fold":
        print("\n".join(build.fold(args.files, replace=args.replace).lines()))
    elif args.command == "check":
        problems = build.check()
        print("\n".join(problems) or "ok")
        return 1 if problems else 0
    elif args.command == "count":
        for language in LANGUAGES:
            print(f"{language}\t{len(read_messages(language))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
