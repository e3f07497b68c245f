"""Dependencies point downward only: spec imports nothing of ours; interp and codegen
import spec (and not each other's executors: the simulator must not borrow the renderer's
address arithmetic, it reads the same spec functions); codegen.lower, the thread-level
lowering both executors run, sits between: it imports only spec, and interp and codegen
may import it; verify imports everything below it, and verify_reducer (the public API
over verify) is imported by none of them.

Inside verify the subpackages are layered too, each over spec, interp and codegen:
proofs (the verifier's own Z3 proofs: a declared op's laws) < epochs (the static
checker) < oracle (check: interpreter against simulator, the reports) < family (a size
family: its members are checked through the oracle) < fuzzing (campaigns judged by the
oracle) < cli (the command line over all of them)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"spec", "interp", "codegen", "verify"}
API = {"oracle", "pytest_plugin"}            # verify_reducer's own modules, on top of all
LOWER = "codegen.lower"
ALLOWED = {"spec": set(), "codegen/lower": {"spec"}, "interp": {"spec", LOWER},
           "codegen": {"spec", LOWER}}
# No exceptions: the fast planner's obligations live below it (codegen.proofs), and the
# plan records what they decided (spec.physical.ChosenBy), which the reports read.
EXCEPTIONS: dict[str, set[str]] = {}

BELOW_VERIFY = {"spec", "interp", "codegen"}
VERIFY_ALLOWED = {
    "proofs": BELOW_VERIFY,
    "epochs": BELOW_VERIFY | {"verify.proofs"},
    "oracle": BELOW_VERIFY | {"verify.proofs", "verify.epochs"},
    "family": BELOW_VERIFY | {"verify.proofs", "verify.epochs", "verify.oracle"},
    "fuzzing": BELOW_VERIFY | {"verify.proofs", "verify.epochs", "verify.oracle",
                               "verify.family"},
    "cli": BELOW_VERIFY | {"verify.proofs", "verify.epochs", "verify.oracle",
                           "verify.family", "verify.fuzzing"},
}
# Known upward imports inside verify, each with its reason.
VERIFY_EXCEPTIONS = {
    # `check` with a size family proves the family after the file's instance, and the
    # family's proofs check each member through check_loaded again: the import is made
    # at call time, where the two meet
    "verify/oracle/pipeline.py": {"verify.family"},
    # every file the command line writes goes through verify.cli.outputs (one rule for
    # checked, atomic writes); a campaign's findings and a bug report's folder are such
    # files
    "verify/fuzzing/bugreport.py": {"verify.cli"},
    "verify/fuzzing/campaign.py": {"verify.cli"},
    # the mangling run drives the command line itself on each mangled program, to judge
    # its exit code and its output as a user would see them
    "verify/fuzzing/mangle_run.py": {"verify.cli"},
}


def _absolute_imports(path: Path):
    """(module, names imported from it) for each absolute import of the module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((a.name, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, tuple(a.name for a in node.names)


def _imported_packages(path: Path) -> set[str]:
    """What of ours a module imports absolutely: a subpackage or API module
    (verify_reducer.X gives X; `from verify_reducer import oracle` gives oracle), and
    `bare X` for an import of a top-level name of ours (never allowed: it would load a
    second copy of the tree)."""
    found = set()
    for name, names in _absolute_imports(path):
        parts = name.split(".")
        if parts[0] == "verify_reducer" and parts[1:3] == ["codegen", "lower"]:
            found.add(LOWER)
        elif parts[0] == "verify_reducer":
            found |= {parts[1]} if len(parts) > 1 else set(names) & API
        elif parts[0] in OURS:
            found.add(f"bare {parts[0]}")
    return found


def test_nothing_imports_a_bare_top_level_name_of_ours():
    """`import spec` would load the tree a second time beside verify_reducer.spec (and
    installed, no such name exists)."""
    modules = [p for folder in ("spec", "interp", "codegen", "verify", "verify_reducer")
               for p in (ROOT / folder).rglob("*.py")]
    # tests/ and benchmarks/ at their top (below them lie TileLang programs, some broken
    # on purpose)
    modules += [p for folder in ("tests", "benchmarks") for p in (ROOT / folder).glob("*.py")]
    bare = {}
    for path in sorted(modules):
        found = {p for p in _imported_packages(path) if p.startswith("bare ")}
        if found:
            bare[str(path.relative_to(ROOT))] = sorted(found)
    assert not bare, bare


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_is_below_it(package):
    wrong = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        name = str(path.relative_to(ROOT))
        extra = (_imported_packages(path) & (OURS | API | {LOWER})) - ALLOWED[package] - \
            {package.replace("/", ".")} - EXCEPTIONS.get(name, set())
        if extra:
            wrong[name] = sorted(extra)
    assert not wrong, f"{package} may import only {sorted(ALLOWED[package])}: {wrong}"


def test_nothing_below_the_public_api_imports_it():
    wrong = {}
    for package in sorted(OURS):
        for path in sorted((ROOT / package).rglob("*.py")):
            found = _imported_packages(path) & API
            if found:
                wrong[str(path.relative_to(ROOT))] = sorted(found)
    assert not wrong, f"verify_reducer's API sits on top; these import it: {wrong}"


def _imported_layers(path: Path) -> set[str]:
    """What of ours a module imports absolutely, at the grain of the layers: spec, interp,
    codegen, `verify.<subpackage>` (or `verify` for its top modules) and the API's
    modules."""
    found = set()
    for name, names in _absolute_imports(path):
        parts = name.split(".")
        if parts[0] != "verify_reducer":
            continue
        if len(parts) == 1:
            found |= set(names) & (API | OURS)
        elif parts[1] != "verify":
            found.add(parts[1])
        elif len(parts) > 2:
            found.add(f"verify.{parts[2]}")
        else:                       # from verify_reducer.verify import oracle, ...
            found |= {f"verify.{n}" for n in names if n in VERIFY_ALLOWED} or {"verify"}
    return found


def test_every_verify_subpackage_has_its_rule():
    folders = {p.name for p in (ROOT / "verify").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(VERIFY_ALLOWED)


@pytest.mark.parametrize("sub", sorted(VERIFY_ALLOWED))
def test_verify_subpackage_imports_only_what_is_below_it(sub):
    wrong = {}
    for path in sorted((ROOT / "verify" / sub).rglob("*.py")):
        name = str(path.relative_to(ROOT))
        extra = _imported_layers(path) - VERIFY_ALLOWED[sub] - {f"verify.{sub}"} - \
            VERIFY_EXCEPTIONS.get(name, set())
        if extra:
            wrong[name] = sorted(extra)
    assert not wrong, f"verify/{sub} may import only {sorted(VERIFY_ALLOWED[sub])}: {wrong}"


def test_the_stated_exceptions_are_still_needed():
    """An exception that no longer happens is taken off the list, so the list says what
    the tree does."""
    stale = {}
    for name, allowed in {**EXCEPTIONS, **VERIFY_EXCEPTIONS}.items():
        path = ROOT / name
        found = _imported_layers(path) if path.exists() else set()
        unused = {a for a in allowed if a not in found}
        if unused:
            stale[name] = sorted(unused)
    assert not stale, stale
