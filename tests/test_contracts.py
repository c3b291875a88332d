"""Contracts that keep the shape of the project: import boundaries, schema = models, documented CLI."""

import ast
import re
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_rules_import_neither_bot_nor_knowledge():
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imports(p) & {"bot", "knowledge", "sqlmodel", "sqlalchemy", "slack_sdk", "slack_bolt"})
        for p in (ROOT / "rules").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_knowledge_does_not_import_bot():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "knowledge").rglob("*.py") if "bot" in _imports(p)]
    assert offenders == []


def test_migrations_match_the_models(engine):
    import importlib
    import pkgutil

    import knowledge

    for info in pkgutil.iter_modules(knowledge.__path__):
        if info.name.endswith("_tables") or info.name == "tables":
            importlib.import_module(f"knowledge.{info.name}")
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    # Type-only differences between SQLModel's AutoString/UTCDateTime and plain SQL types are not drift.
    real = [d for d in diff if not (isinstance(d, list) and d and d[0][0] == "modify_type")]
    assert real == []


def _cli_commands():
    from bot.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = []
    for name, p in sub.choices.items():
        nested = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        if nested:
            out += [f"{name} {child}" for child in nested[0].choices]
        else:
            out.append(name)
    return sorted(out)


def test_every_cli_command_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [c for c in _cli_commands() if not re.search(rf"gpu-advisor {re.escape(c)}\b", readme)]
    assert missing == []


def test_procfile_names_the_four_processes():
    procs = dict(line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())
    assert set(procs) == {"web", "worker", "clock", "release"}
    commands = _cli_commands()
    for command in procs.values():
        words = command.split()
        assert words[0] == "gpu-advisor"
        assert words[1] in {c.split()[0] for c in commands}, command


def test_head_revision_matches_alembic():
    """The start-up shortcut that reads the head from file names must agree with Alembic."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from knowledge.db import MIGRATIONS_DIR, head_revision

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert ScriptDirectory.from_config(cfg).get_current_head() == head_revision()


def test_schema_is_current_sees_an_old_or_empty_database(engine, db_url):
    from sqlalchemy import text

    from knowledge.db import make_engine, schema_is_current

    assert schema_is_current(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    assert not schema_is_current(engine)
    fresh = make_engine(db_url)
    assert not schema_is_current(fresh)
    fresh.dispose()
