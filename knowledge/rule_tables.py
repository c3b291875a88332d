"""Read the engine's rule tables (rules/data/rule_tables.json) once and hand them over validated."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from rules.tables import RuleTableError, RuleTables, parse_rule_tables

RULE_TABLES_FILE = "rule_tables.json"


@lru_cache(maxsize=1)
def load_rule_tables() -> RuleTables:
    """Load and validate the bundled rule tables; a bad file raises RuleTableError with file and row."""
    path = Path(__file__).resolve().parents[1] / "rules" / "data" / RULE_TABLES_FILE
    source = f"rules/data/{RULE_TABLES_FILE}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RuleTableError(f"{source}:{error.lineno}: invalid JSON: {error.msg}") from error
    return parse_rule_tables(data, source=source)
