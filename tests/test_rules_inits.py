"""The engine's dataclasses that spell out their `__init__` (so that mypyc compiles it: rules/__init__.py) set
exactly their declared fields, in order, with the declared defaults: the spelled-out method and the field list
cannot drift apart unseen."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rules"


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list)


def _fields(node: ast.ClassDef) -> list[tuple[str, str, str | None, bool]]:
    """(name, annotation, default expression or None, init) for each declared field, in order."""
    out = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        annotation = ast.unparse(item.annotation)
        if annotation.startswith("ClassVar"):
            continue
        default: str | None = None
        init = True
        value = item.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "field":
            keywords = {k.arg: k.value for k in value.keywords}
            init = not (isinstance(keywords.get("init"), ast.Constant) and keywords["init"].value is False)
            if "default" in keywords:
                default = ast.unparse(keywords["default"])
            elif "default_factory" in keywords:
                default = ast.unparse(keywords["default_factory"]) + "()"
        elif value is not None:
            default = ast.unparse(value)
        out.append((item.target.id, annotation, default, init))
    return out


def init_problems(source: str) -> list[str]:
    """What is wrong with the spelled-out `__init__` of each dataclass in `source` (empty when all agree)."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and _is_dataclass(node)):
            continue
        init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            continue
        fields = _fields(node)
        arguments = init.args.args[1:]
        defaults = [None] * (len(arguments) - len(init.args.defaults)) + [ast.unparse(d) for d in init.args.defaults]
        declared = [(n, a, d) for n, a, d, wanted in fields if wanted]
        spelled = [(a.arg, ast.unparse(a.annotation) if a.annotation else "", d) for a, d in zip(arguments, defaults)]
        if spelled != declared or init.args.kwonlyargs or init.args.vararg or init.args.kwarg:
            problems.append(f"{node.name}: parameters {spelled} != fields {declared}")
        sets = []
        for statement in init.body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                    and ast.unparse(statement.value.func) == "object.__setattr__":
                self_arg, name, value = statement.value.args
                sets.append((ast.unparse(self_arg), ast.literal_eval(name), ast.unparse(value)))
            else:
                problems.append(f"{node.name}: __init__ does more than set its fields: {ast.unparse(statement)}")
        wanted_sets = [("self", n, n if wanted else (d or "")) for n, _, d, wanted in fields]
        if sets != wanted_sets:
            problems.append(f"{node.name}: sets {sets} != fields {wanted_sets}")
    return problems


def test_every_spelled_out_init_sets_its_declared_fields_in_order_with_their_defaults() -> None:
    checked = 0
    for path in sorted(ROOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert init_problems(source) == [], path
        checked += source.count("# Spelled out: mypyc compiles it")
    assert checked >= 25  # the hot classes of the search (Setup, plans, rates, options, findings ...)


GOOD = '''
@dataclass(frozen=True, slots=True)
class P:
    a: int
    b: str = "x"
    c: dict[str, int] = field(default_factory=dict, init=False)

    def __init__(self, a: int, b: str = "x") -> None:
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", dict())
'''


def test_the_check_finds_a_missing_field_a_changed_default_and_a_swapped_order() -> None:
    assert init_problems(GOOD) == []
    missing = GOOD.replace('        object.__setattr__(self, "b", b)\n', "")
    default = GOOD.replace('b: str = "x") -> None', 'b: str = "y") -> None')
    swapped = GOOD.replace("a: int\n    b: str = \"x\"\n", "b: str = \"x\"\n    a: int\n")
    added = GOOD.replace("    c: dict", "    d: int = 0\n    c: dict")
    for broken in (missing, default, swapped, added):
        assert init_problems(broken), broken
