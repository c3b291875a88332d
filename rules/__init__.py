"""What we conclude: a pure, deterministic rule engine over typed values (no I/O, no Slack, no database).

Its modules are usually compiled to C extensions at install (mypyc, setup.py), which import in place of
their sources. Compiled modules call one another directly, not through `import`, so a build is used whole
or not at all: when, in a source checkout, a source changed after the build (a developer's edit), or when
`GPU_ADVISOR_COMPILED=0` is set, every module of the package is imported from its source, with a warning in
the first case. Rebuild with `pip install -e .`. (The check walks this folder once at import, in a checkout
only: about 0.7 ms.)

mypyc compiles the methods a module spells out, not those the `dataclass` decorator generates at import, which
run as Python: a frozen dataclass's generated `__init__` sets each field through `object.__setattr__` in
interpreted code. The classes the planner builds by the thousand per answer (setups, plans, rates, options,
findings) therefore spell out their `__init__` with the same `object.__setattr__` calls, which mypyc turns
into direct slot writes: about 15x faster to construct (367 -> 24 ns for three fields), the same semantics
from source. tests/test_rules_inits.py keeps each such `__init__` equal to its field list.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType

_HERE = os.path.dirname(os.path.abspath(__file__))
_EXTENSION = ".cpython-"  # rules/x.cpython-311-x86_64-linux-gnu.so beside rules/x.py


def stale_source(root: str = _HERE) -> str | None:
    """The first source under `root` (a path relative to its parent) changed after its compiled module was
    built, else None."""
    for folder, _, names in os.walk(root):
        built = {name.split(".", 1)[0]: name for name in names if _EXTENSION in name and name.endswith(".so")}
        for stem, name in built.items():
            source = os.path.join(folder, stem + ".py")
            if os.path.exists(source) and os.stat(source).st_mtime_ns > os.stat(os.path.join(folder, name)).st_mtime_ns:
                return os.path.relpath(source, os.path.dirname(root))
    return None


def in_source_tree(root: str = _HERE) -> bool:
    """Whether the package runs from a source checkout (`setup.py` beside it), where sources get edited.

    Only there are modification times compared: an installed package (site-packages) has its sources
    written after its compiled modules, and nobody edits them."""
    return os.path.exists(os.path.join(os.path.dirname(root), "setup.py"))


class SourceFinder:
    """Finds this package's modules as source files only (before the path finder, which prefers extensions)."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if not name.startswith(__name__ + ".") or not path:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(name, target)
            if spec is not None:
                return spec
        return None


def _choose() -> None:
    if os.environ.get("GPU_ADVISOR_COMPILED", "1") == "0":
        sys.meta_path.insert(0, SourceFinder())
        return
    stale = stale_source() if in_source_tree() else None
    if stale is not None:
        warnings.warn(f"{stale} changed after the engine was compiled: the engine runs from source (slower) until "
                      "it is built again with `pip install -e .`", RuntimeWarning, stacklevel=2)
        sys.meta_path.insert(0, SourceFinder())


def compiled() -> bool:
    """Whether the engine runs compiled (its modules imported from the C extensions built at install)."""
    from rules import engine

    return not engine.__file__.endswith(".py") if engine.__file__ else False


_choose()
