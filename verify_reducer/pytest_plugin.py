"""pytest plugin: judge a backend with the oracle inside a project's own test suite.

Installed with the package (entry point `pytest11`), or named in a conftest.py:
`pytest_plugins = ["verify_reducer.pytest_plugin"]`.

The marker runs a backend over programs, one test per program:

    @pytest.mark.reducer_backend(my_backend, programs="kernels/")
    def test_my_backend(reducer_case):
        pass        # fails with the oracle's report when my_backend disagrees

  backend   a callable backend(program, inputs) -> {name: array}, or a built-in
            backend's name ("interp", "sim:canonical", "cuda:auto", "tilelang")
  programs  "examples" (the default: this project's examples folder, in a source
            checkout or an editable install), a folder (every *.py in it), a file, a
            glob, or a list of them; relative paths are read from the test file's
            folder. Programs whose `# expect:` header expects an error are left out:
            the oracle gives them no meaning.
  inputs    "witness" (default), "seeded", a mapping or an .npz path
  seed, func, fill   as in verify_reducer.oracle.check
  params    factory parameters for every program (`params={"M": 256}`), as
            verify_reducer.oracle.load takes them

Each case is run before the test body: a mismatch (or a violation of a built-in
backend) fails the test with the report, and so does an inconclusive comparison (some
element whose bound cannot judge it: never a pass); a program the oracle rejects is
skipped. The
body can look further at `reducer_case.report` (a verify_reducer.oracle.Report) and
`reducer_case.program`; it need not request `reducer_case` at all.

The fixture `reducer_oracle` offers the API with pytest-style assertions:

    def test_gemv(reducer_oracle):
        report = reducer_oracle.assert_matches("kernels/gemv.py", my_backend)
        reducer_oracle.assert_matches(prog, {"y": y}, inputs=ins)  # outputs as given

A relative program path is read from the test file's folder, by the marker and the
fixture alike (`reducer_oracle.programs(...)`, `assert_matches("kernels/gemv.py", ...)`),
so a suite gives the same answer from whatever folder pytest is started in.

A backend that breaks the oracle's contract (an output it does not have, one of another
shape, inputs the oracle cannot make) fails its test with the oracle's one-line reason,
never with a traceback through this plugin.

The oracle is imported on first use only: loading the plugin costs nothing."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MARKER = "reducer_backend"
# the oracle's functions whose first argument is a program (a path, source or Program)
PROGRAM_FIRST = ("load", "witness", "witness_inputs", "reference", "compare", "check")
CASE_FIXTURE = "reducer_case"


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(backend, programs='examples', inputs='witness', seed=0, "
        "func=None, fill='witness', params=None): run backend over programs, one test each, and fail "
        "a test with the oracle's report when the backend disagrees (verify_reducer)")


def examples_dir() -> Path:
    """This project's examples folder (a source checkout or an editable install)."""
    return Path(__file__).resolve().parent.parent / "examples"


def resolve_programs(spec, base: Path) -> list[Path]:
    """The program files a `programs=` value names (see the module's docstring)."""
    if spec is None or spec == "examples":
        folder = examples_dir()
        if not folder.is_dir():
            raise pytest.UsageError(f"{MARKER}: no examples folder at {folder} (an "
                                    "installed package has none): pass programs=")
        return _expected_ok(sorted(folder.glob("*.py")))
    if isinstance(spec, (list, tuple)):
        return [p for item in spec for p in resolve_programs(item, base)]
    path = Path(os.fspath(spec))
    if not path.is_absolute():
        path = base / path
    if any(ch in str(path) for ch in "*?["):
        found = [Path(p) for p in sorted(glob.glob(str(path), recursive=True))]
    elif path.is_dir():
        found = sorted(path.glob("*.py"))
    elif path.is_file():
        return [path]                    # named alone: run it, whatever it expects
    else:
        raise pytest.UsageError(f"{MARKER}: no program or folder {path}")
    return _expected_ok([p for p in found if p.suffix == ".py"])


def _expected_ok(paths: list[Path]) -> list[Path]:
    """Leave out programs whose `# expect:` header expects diagnostics."""
    from verify_reducer.verify.oracle.expect import ExpectationSyntaxError, parse_expectation
    from verify_reducer.spec.source import SourceDecodeError, read_source_file
    kept = []
    for p in paths:
        try:
            exp = parse_expectation(read_source_file(str(p)), str(p))
        except (OSError, SourceDecodeError, ExpectationSyntaxError):
            kept.append(p)               # the oracle says what is wrong with it
            continue
        if not exp.errors:
            kept.append(p)
    return kept


@dataclass
class ReducerCase:
    """One program of a marked test: the backend is run and judged on first access to
    `report`."""
    path: Path
    backend: Any
    inputs: Any = None
    seed: int = 0
    func: str | None = None
    fill: str = "witness"
    params: dict | None = None
    _report: Any = field(default=None, repr=False)

    @property
    def program(self):
        from verify_reducer import oracle
        return oracle.load(self.path, self.func, self.params)

    @property
    def report(self):
        if self._report is None:
            from verify_reducer import oracle
            run = oracle.backend(self.backend) if isinstance(self.backend, str) \
                else self.backend
            self._report = oracle.check(self.program, run, self.inputs, seed=self.seed,
                                        fill=self.fill)
        return self._report


def _marker_settings(marker) -> dict:
    if not marker.args and "backend" not in marker.kwargs:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} needs a backend: a callable "
                                "backend(program, inputs) or a built-in name")
    kwargs = dict(marker.kwargs)
    backend = marker.args[0] if marker.args else kwargs.pop("backend")
    unknown = set(kwargs) - {"programs", "inputs", "seed", "func", "fill", "backend",
                             "params"}
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: unknown argument(s) "
                                f"{', '.join(sorted(unknown))}")
    return {"backend": backend, "programs": kwargs.get("programs", "examples"),
            "inputs": kwargs.get("inputs"), "seed": kwargs.get("seed", 0),
            "func": kwargs.get("func"), "fill": kwargs.get("fill", "witness"),
            "params": kwargs.get("params")}


def pytest_generate_tests(metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        return
    settings = _marker_settings(marker)
    paths = resolve_programs(settings["programs"], Path(metafunc.definition.path).parent)
    if CASE_FIXTURE not in metafunc.fixturenames:
        metafunc.fixturenames.append(CASE_FIXTURE)
    cases = [ReducerCase(p, settings["backend"], settings["inputs"], settings["seed"],
                         settings["func"], settings["fill"], settings["params"])
             for p in paths]
    metafunc.parametrize(CASE_FIXTURE, cases, indirect=True,
                         ids=[_case_id(p, paths) for p in paths])


def _case_id(path: Path, paths: list[Path]) -> str:
    same_stem = sum(p.stem == path.stem for p in paths) > 1
    return f"{path.parent.name}/{path.stem}" if same_stem else path.stem


@pytest.fixture
def reducer_case(request) -> ReducerCase:
    """The program case of a test marked reducer_backend (parametrized by the plugin)."""
    case = getattr(request, "param", None)
    if case is None:
        raise pytest.UsageError(f"{CASE_FIXTURE} is given to tests marked "
                                f"@pytest.mark.{MARKER}(...) only")
    return case


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item) -> None:
    """A marked test fails with the oracle's report before its body runs."""
    if item.get_closest_marker(MARKER) is None:
        return
    case = getattr(item, "funcargs", {}).get(CASE_FIXTURE)
    if case is None:          # the test did not request the fixture: its parameter
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get(CASE_FIXTURE) if callspec is not None else None
    if case is None:
        return
    from verify_reducer import oracle
    try:
        report = case.report
    except oracle.ProgramRejected as exc:
        pytest.skip(f"the oracle rejects {case.path}: it has no reference\n{exc}")
    except contract_errors() as exc:
        fail_contract(case.path, exc)
    if not report.ok:
        fail(report)


def contract_errors() -> tuple[type[Exception], ...]:
    """The oracle's errors about its arguments: the program, the inputs, the outputs a
    backend returned (OutputsError and InputError are ValueErrors of their own)."""
    from verify_reducer import oracle
    return oracle.OracleError, oracle.OutputsError, oracle.InputError


def fail_contract(program, exc) -> None:
    """Fail a test whose backend or arguments broke the oracle's contract, with the
    oracle's reason and no traceback (the plugin's frames say nothing to the user)."""
    pytest.fail(f"{program}: {type(exc).__name__}: {exc}", pytrace=False)


def fail(report) -> None:
    """Fail the test with the report; an inconclusive one says first that it is not a
    mismatch but a comparison nobody could check."""
    head = (f"inconclusive: {report.unchecked} element(s) could not be judged (their "
            f"bound is infinite or admits every value); the backend was not verified\n"
            if report.inconclusive else "")
    pytest.fail(head + str(report), pytrace=False)


class Oracle:
    """The `reducer_oracle` fixture: verify_reducer.oracle with assertions that fail a
    test with the report; relative program paths are read from `base`, the requesting
    test file's folder (as the marker reads them)."""

    def __init__(self, base: Path | None = None):
        self.base = base if base is not None else Path.cwd()

    def __getattr__(self, name: str):
        from verify_reducer import oracle
        if name not in oracle.__all__:
            raise AttributeError(name)
        found = getattr(oracle, name)
        if name not in PROGRAM_FIRST:
            return found

        def reading_from_base(program, *args, **kwargs):
            return found(self._resolve(program), *args, **kwargs)
        reading_from_base.__doc__ = found.__doc__
        return reading_from_base

    def _resolve(self, program):
        return self.base / program if _relative_path(program) else program

    def programs(self, where="examples", base: str | os.PathLike | None = None) -> list[Path]:
        """The program files a `programs=` value names (relative to base, default the
        test file's folder)."""
        return resolve_programs(where, Path(base) if base is not None else self.base)

    def assert_matches(self, program, backend_or_outputs, inputs=None, *, params=None,
                       **options):
        """Judge a backend (a callable, or a built-in's name) run on the inputs, or the
        outputs given as a mapping computed from them; pytest.fail with the report on a
        mismatch or an inconclusive comparison, and with the oracle's reason when the
        backend or the arguments break its contract. params: a factory's parameters (as
        oracle.load takes them). Returns the report."""
        from verify_reducer import oracle
        program = self._resolve(program)
        try:
            if params is not None:
                program = oracle.load(program, params=params)
            if isinstance(backend_or_outputs, str):
                backend_or_outputs = oracle.backend(backend_or_outputs)
            if callable(backend_or_outputs):
                report = oracle.check(program, backend_or_outputs, inputs, **options)
            else:
                report = oracle.compare(program, backend_or_outputs, inputs, **options)
        except contract_errors() as exc:
            fail_contract(program, exc)
        if not report.ok:
            fail(report)
        return report


def _relative_path(program) -> bool:
    """Whether program is a relative file path (not a Program, not source text: the
    oracle reads text with a newline or `prim_func` in it as source)."""
    if isinstance(program, str) and ("\n" in program or "prim_func" in program):
        return False
    return isinstance(program, (str, os.PathLike)) and not Path(program).is_absolute()


@pytest.fixture
def reducer_oracle(request) -> Oracle:
    """verify_reducer.oracle plus `assert_matches` and `programs` (see Oracle), reading
    relative paths from the requesting test file's folder."""
    return Oracle(Path(request.path).parent)
