"""The layers of DESIGN §1, read from the code: who may import whom, and no import circle anywhere.

Every module of bot/, knowledge/ and rules/ is imported (it must import cleanly, with no work at import
time that fails without settings), and every `import` / `from … import` in its source is read with `ast`,
function-local and TYPE_CHECKING imports included: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "knowledge", "rules")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()
# Alembic's env script runs only inside Alembic (it reads `alembic.context.config` at import); its
# imports are still read below.
RUN_BY_ALEMBIC = frozenset({"knowledge.migrations.env"})


def _owner(name: str) -> str | None:
    """The project module an imported name lives in (`rules.verdict.Finding` -> `rules.verdict`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from ..y import z
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            owner = _owner(target)
            if owner is not None and owner != module:
                out.add(owner)
    return out


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# (who, may not import, why) — DESIGN §1 "Shape" and issue 13.
FORBIDDEN = (
    ("rules", "bot", "the rule engine is pure: no Slack, no parsing, no cards"),
    ("rules", "knowledge", "the rule engine works on values handed in, never the database"),
    ("knowledge", "bot", "what we know does not depend on how we talk"),
    ("bot.render", "bot.answer", "render turns decided values into cards; it decides nothing"),
    ("bot.render", "bot.slack", "render knows nothing of delivery"),
    ("bot.render", "bot.parse", "render does not read questions"),
    ("bot.render", "knowledge", "render gets values, never the database or the knowledge base"),
    ("bot.parse", "bot.render", "parsing is language work, not presentation"),
    ("bot.parse", "bot.answer", "the parser feeds the answering layer, not the other way round"),
    ("bot.slack.listeners", "bot.render", "listeners translate payloads and call the answering layer"),
    ("bot.slack.listeners", "bot.parse", "listeners translate payloads and call the answering layer"),
    ("bot.digest", "bot.slack", "digests are built apart from Slack delivery"),
)


def test_every_module_imports() -> None:
    failed = {}
    for module in sorted(set(MODULES) - RUN_BY_ALEMBIC):
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            failed[module] = f"{type(exc).__name__}: {exc}"
    assert not failed, failed
    assert len(MODULES) > 100  # the walk found the project, not an empty folder


@pytest.mark.parametrize(("who", "banned", "why"), FORBIDDEN, ids=[f"{w}-x-{b}" for w, b, _ in FORBIDDEN])
def test_layer_rule(who: str, banned: str, why: str) -> None:
    broken = sorted(f"{module} -> {target}" for module, targets in GRAPH.items() if _in(module, who)
                    for target in targets if _in(target, banned))
    assert not broken, f"{why}: {broken}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_anywhere() -> None:
    assert _cycles(GRAPH) == []


def test_the_circle_finder_finds_circles() -> None:
    """The check above can fail: a made-up graph with a circle of three and a self-contained pair."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set(), "f": {"g"}, "g": {"f"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["f", "g"]]


def test_the_import_reader_sees_lazy_and_type_only_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from rules.verdict import Verdict\n"
        "def f():\n    from knowledge.snapshot import Snapshot\n    import bot.render.cards\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _imports("probe", path) == {"rules.verdict", "knowledge.snapshot", "bot.render.cards"}
