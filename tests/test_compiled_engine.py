"""The rule engine compiled at install (mypyc, setup.py): used whole or not at all, and answering as its source does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rules
from rules import stale_source

ROOT = Path(__file__).resolve().parents[1]
SUFFIX = ".cpython-311-x86_64-linux-gnu.so"
needs_build = pytest.mark.skipif(not rules.compiled(), reason="the engine is not compiled here (no build, or "
                                 "GPU_ADVISOR_COMPILE=0 at install); CI builds it")


def _touch(path: Path, mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_source_newer_than_its_compiled_module_is_named_and_an_older_one_is_not(tmp_path: Path) -> None:
    package = tmp_path / "rules"
    _touch(package / "plans" / "fit.py", 1_000)
    _touch(package / "plans" / f"fit{SUFFIX}", 2_000)
    _touch(package / "types.py", 1_000)
    _touch(package / f"types{SUFFIX}", 2_000)
    _touch(package / "calibration.py", 9_000)  # never compiled: no module beside it, never stale
    assert stale_source(str(package)) is None
    _touch(package / "plans" / "fit.py", 3_000)
    assert stale_source(str(package)) == os.path.join("rules", "plans", "fit.py")


def test_what_a_snapshot_holds_survives_a_pickle_round_trip(snapshot: object) -> None:
    """The snapshot cache pickles these; a compiled frozen class refuses the default unpickling (field by field)."""
    import pickle

    from knowledge.snapshot import Snapshot

    assert isinstance(snapshot, Snapshot)
    values = [next(iter(snapshot.gpus.values())), next(iter(snapshot.models.values())),
              next(iter(snapshot.providers.values())), next(o for offers in snapshot.offers_by_gpu.values()
                                                            for o in offers)]
    values.append(next(p for prices in snapshot.purchase_prices.values() for p in prices))
    for value in values:
        copy = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert type(copy) is type(value) and copy == value


def test_ci_runs_the_compiled_engine() -> None:
    """CI installs as the README says, with a C compiler: a build that silently fell back to source would
    leave the benchmark measuring something else than what is installed."""
    if os.environ.get("CI") != "true":
        pytest.skip("only CI is known to have built the engine")
    assert rules.compiled(), "pip install -e . did not compile the engine (see the install log's warnings)"


def _run(code: str, *, compiled: bool, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_ADVISOR_COMPILED": "1" if compiled else "0", "PYTHONWARNINGS": "default"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          cwd=path or ROOT, check=False)


ANSWER_ALL = """
import hashlib, json
from knowledge.setup import prepare_database
from knowledge.snapshot import load_snapshot
from bot.answer.pipeline import answer
from bot.bench.answers import NOW, load_corpus
import rules
snapshot = load_snapshot(prepare_database({url!r}))
digest = hashlib.sha256()
for request in load_corpus():
    reply = answer(request.text, snapshot=snapshot, now=NOW)
    digest.update(json.dumps([reply.kind, reply.text, reply.blocks], sort_keys=True, default=str).encode())
print(rules.compiled(), digest.hexdigest())
"""


@needs_build
def test_the_compiled_engine_answers_the_whole_corpus_byte_for_byte_as_its_source(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'same.db'}"
    code = ANSWER_ALL.format(url=url)
    compiled, source = _run(code, compiled=True), _run(code, compiled=False)
    assert compiled.returncode == 0 and source.returncode == 0, compiled.stderr[-2000:] + source.stderr[-2000:]
    built, built_digest = compiled.stdout.split()
    plain, plain_digest = source.stdout.split()
    assert (built, plain) == ("True", "False")
    assert built_digest == plain_digest


@needs_build
def test_an_edited_source_makes_the_whole_package_run_from_source_with_a_warning(tmp_path: Path) -> None:
    copy = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.py", tmp_path / "setup.py")  # a source checkout, where sources are edited
    probe = ("import rules.plans.fit as f, rules.engine as e, rules.types as t; "
             "print(f.__file__.endswith('.py'), e.__file__.endswith('.py'), t.__file__.endswith('.py'))")
    fresh = _run(probe, compiled=True, path=tmp_path)
    assert fresh.stdout.split() == ["False", "False", "False"], fresh.stderr[-2000:]
    edited = copy / "plans" / "fit.py"
    edited.write_text(edited.read_text() + "\n")
    later = max(p.stat().st_mtime_ns for p in copy.rglob("*.so")) + 1_000_000_000
    os.utime(edited, ns=(later, later))
    stale = _run(probe, compiled=True, path=tmp_path)
    assert stale.stdout.split() == ["True", "True", "True"], stale.stderr[-2000:]
    assert "rules/plans/fit.py changed after the engine was compiled" in stale.stderr


@needs_build
def test_an_installed_package_uses_its_build_though_its_sources_were_written_after_it(tmp_path: Path) -> None:
    """pip writes an installed package's sources after its compiled modules: only a checkout compares times."""
    copy = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", copy, ignore=shutil.ignore_patterns("__pycache__"))
    later = max(p.stat().st_mtime_ns for p in copy.rglob("*.so")) + 1_000_000_000
    for source in copy.rglob("*.py"):
        os.utime(source, ns=(later, later))
    installed = _run("import rules.engine as e; print(e.__file__.endswith('.py'))", compiled=True, path=tmp_path)
    assert installed.stdout.split() == ["False"], installed.stderr[-2000:]
    assert "changed after the engine was compiled" not in installed.stderr


def test_only_a_checkout_compares_times(tmp_path: Path) -> None:
    from rules import in_source_tree

    (tmp_path / "rules").mkdir()
    assert not in_source_tree(str(tmp_path / "rules"))
    (tmp_path / "setup.py").write_text("")
    assert in_source_tree(str(tmp_path / "rules"))
    assert in_source_tree()  # this checkout
