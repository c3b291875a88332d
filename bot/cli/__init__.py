"""The `gpu-advisor` command: one entry point; each module in this package registers its commands."""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

log = logging.getLogger(__name__)
# Modules of this package that register no command: not imported to build the command line
# (validate.py builds pydantic models, ~80 ms of every start; `estimate` imports it when it runs).
HELPER_MODULES = frozenset({"context", "validate"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-advisor",
        description="Which GPU to rent or buy for a training, fine-tuning or inference job.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name in HELPER_MODULES:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(subparsers)
    return parser


def utf8_stdout() -> None:
    """Output is UTF-8 whatever the locale (DESIGN §8: every `--json` output is valid UTF-8).

    `errors="replace"` is the last guard: a character that cannot be encoded (a lone surrogate that no
    earlier step cleaned) is written as `?`, never as a raw byte (surrogateescape) or a traceback.
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and (str(getattr(sys.stdout, "encoding", "")).lower().replace("-", "") != "utf8"
                                    or getattr(sys.stdout, "errors", "strict") != "replace"):
        reconfigure(encoding="utf-8", errors="replace")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    utf8_stdout()
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    from bot.cli.context import CliError
    from bot.settings import SettingsError

    try:
        return int(handler(args) or 0)
    except (CliError, SettingsError) as exc:
        print(f"gpu-advisor: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
