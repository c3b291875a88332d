"""Builds the rule engine's modules (rules/) as C extensions with mypyc where a C compiler is present.

Everything else is declared in pyproject.toml. The engine is plain, strictly typed Python; mypyc (mypy's
compiler, https://mypyc.readthedocs.io) turns each module into a C extension that imports in place of its
source and runs the same code about twice as fast (docs/BENCHMARKS.md, "The compiled engine"). Every module
stays importable as source: without a C compiler the build warns and installs pure Python (`optional`
extensions), `GPU_ADVISOR_COMPILE=0` skips the build, and `GPU_ADVISOR_COMPILED=0` at run time ignores
a build (rules/__init__.py).

Not compiled: the calibration modules (tests and reports only) and the package `__init__` files.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from setuptools import Extension, setup


def compiled_modules() -> list[str]:
    root = Path(__file__).parent
    return sorted(str(p.relative_to(root)) for p in (root / "rules").rglob("*.py")
                  if p.name != "__init__.py" and "calibration" not in p.name)


def extensions() -> list[Extension]:
    if os.environ.get("GPU_ADVISOR_COMPILE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without isolation, in an environment without mypy
        warnings.warn("mypy (mypyc) is not installed: the rule engine is installed as plain Python", stacklevel=1)
        return []

    # One group, its shared library inside the package (rules/native__mypyc*.so), so that an editable
    # install finds it through the package like any module.
    try:
        built = mypycify(compiled_modules(), opt_level="3", group_name="rules.native")
    except (Exception, SystemExit) as error:  # mypyc refused some code (it exits on a compile error)
        warnings.warn(f"mypyc could not compile the rule engine ({error!r}): installed as plain Python", stacklevel=1)
        return []
    for extension in built:
        extension.optional = True  # no C compiler: a warning, and the engine runs as Python
    return built


setup(ext_modules=extensions())
