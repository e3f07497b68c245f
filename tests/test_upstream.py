"""The upstream corpus (tests/upstream/): kernels taken from TileLang's own examples/ and
testing/python/, each file the kernel as upstream writes it with a header that says where
it comes from, what was changed, which constructs it uses and what `check` says today.

- every header is complete, and its upstream path and commit exist in a clone of
  TileLang's repository when TILELANG_MIRROR names one (a git directory; CI has none, and
  that sub-check is skipped there);
- `check` gives exactly the recorded verdict (`# expect:` lines, tests/programs' grammar);
  a refused kernel names the constructs that block it (`# blocked-by:`, read here);
- a factory whose parameters have no defaults is also checked bound: the file with
  `_bound = FACTORY(PARAMS)` appended (the header's params; the frontend binds a factory
  from a module-level call with constant arguments), which shows what blocks it behind
  the factory (`# bound:` lines, the expect grammar, and `# bound-blocked-by:`);
- every kernel has a numpy reference (tests/upstream/references.py), and every kernel
  expected to verify (today or bound) equals it in the interpreter and the simulator, canonical and fast
  (where the fast plan is proved), within the interpreter's bound (interp/accept.py);
- the generated CUDA of those kernels compiles (`nvcc`), and on the GPU (`gpu`) CUDA in
  both plans and TileLang itself (`--backend tilelang`, with the pass configs the upstream
  test compiles with: `# tilelang-config:`) equal the reference;
  tests/upstream_tilelang.py (a script, not collected) runs TileLang itself on all 64,
  the refused ones and the eager `@tilelang.jit` ones included, for the corpus table;
- docs/limits.md's table "The upstream corpus" is the one the headers give."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.interp.accept import within_bound
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.expect import parse_expectation, unmatched

from cuda_env import NIGHTLY, gpu_problem, nvcc

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = ROOT / "tests" / "upstream"
CORPUS = sorted(p for p in CORPUS_DIR.glob("*.py") if p.name != "references.py")
MIRROR = Path(os.environ.get("TILELANG_MIRROR", "")) if os.environ.get("TILELANG_MIRROR") \
    else None
LIMITS = ROOT / "docs" / "limits.md"
KEYS = ("upstream", "function", "changed", "constructs", "blocked-by", "bound-blocked-by",
        "tilelang-config")
REQUIRED = KEYS[:5]
_UPSTREAM = re.compile(r"tile-ai/tilelang (\S+) @ ([0-9a-f]{40})$")


def _stem(path: Path) -> str:
    return path.stem


@lru_cache(maxsize=None)
def header(path: Path) -> dict[str, str]:
    """The header's `# key: value` lines (a value may continue on `#   ` lines)."""
    out: dict[str, str] = {}
    key = None
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*([a-z-]+):\s*(.*)$", line)
        if m and m.group(1) in KEYS:
            key = m.group(1)
            out[key] = m.group(2).strip()
        elif line.startswith("#   ") and key is not None:
            out[key] += " " + line[4:].strip()
        else:
            key = None
    return out


def constructs(path: Path) -> list[str]:
    return [c.strip() for c in header(path)["constructs"].split(",") if c.strip()]


def blockers(path: Path, key: str = "blocked-by") -> list[str]:
    value = header(path)[key]
    return [] if value == "none" else [b.strip() for b in value.split(",")]


def expected_ok(path: Path) -> bool:
    return parse_expectation(path.read_text(), str(path)).ok


def tilelang_config(path: Path) -> dict[str, str]:
    """`# tilelang-config: KEY=VALUE, ... (why)`: the pass configs the upstream test
    compiles the kernel with, handed to TileLang as `--tilelang-config` would."""
    value = re.sub(r"\s*\(.*\)$", "", header(path).get("tilelang-config", ""))
    pairs = [item.strip().split("=", 1) for item in value.split(",") if item.strip()]
    return {key.strip(): val.strip() for key, val in pairs}


def bound_expectation(path: Path):
    """The `# bound:` lines read with the expect grammar (None: no bound check)."""
    lines = [line.replace("# bound:", "# expect:", 1) for line in path.read_text().splitlines()
             if line.startswith("# bound:")]
    return parse_expectation("\n".join(lines), str(path)) if lines else None


def bound_source(path: Path) -> str:
    name, params = re.match(r"(\w+); params: ([^;]*)", header(path)["function"]).groups()
    return path.read_text().rstrip("\n") + f"\n\n_bound = {name}({params.strip()})\n"


def source_of(path: Path) -> str | None:
    """The text that verifies: None for the file itself, else the bound source."""
    return None if expected_ok(path) else bound_source(path)


BOUND = [p for p in CORPUS if bound_expectation(p) is not None]
VERIFIED = [p for p in CORPUS if expected_ok(p)]
VERIFIED_BOUND = [p for p in BOUND if bound_expectation(p).ok]
RUNNABLE = VERIFIED + VERIFIED_BOUND


@lru_cache(maxsize=1)
def references():
    """tests/upstream/references.py, loaded under a name of its own (tests/references.py
    is `references`, whose helpers it imports)."""
    spec = importlib.util.spec_from_file_location("upstream_references",
                                                  CORPUS_DIR / "references.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.REFERENCES


def reference_inputs(path: Path, loaded: pipeline.Loaded, seed: int = 0):
    ref = references()[path.stem]
    given = ref.inputs(np.random.default_rng([seed, 25])) if ref.inputs else None
    return loaded.inputs(seed, given)


def agreement(got, want, bound) -> np.ndarray:
    """Elementwise, whether got equals the numpy value: integers exactly; floats within
    the interpreter's bound plus the ulp of rounding numpy's float64 value to got's dtype."""
    got, want = np.asarray(got), np.asarray(want).reshape(np.shape(got))
    if got.dtype.kind in "iub":
        return got.astype(np.int64) == want.astype(np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = want.astype(got.dtype)
        return within_bound(got, rounded, np.asarray(bound, np.float64)
                            + np.spacing(np.abs(rounded)).astype(np.float64))


def judge(name: str, got, want, bound) -> str | None:
    """None when got equals the numpy value (agreement), else which elements differ."""
    got, want = np.asarray(got), np.asarray(want).reshape(np.shape(got))
    ok = agreement(got, want, bound)
    if ok.all():
        return None
    bad = [tuple(int(i) for i in idx) for idx in np.argwhere(~ok)[:5]]
    rows = "\n".join(f"    {name}{list(i)}: got {got[i]!r}, reference {want[i]!r}" for i in bad)
    return f"{name}: {int((~ok).sum())} of {ok.size} differ\n{rows}"


def compare(label: str, path: Path, outputs, bounds, values) -> list[str]:
    want = references()[path.stem].outputs(values)
    return [f"{label}: {msg}" for name, w in want.items()
            if (msg := judge(name, outputs[name], w, bounds[name])) is not None]


# ----------------------------------------------------------------------------- headers


def test_the_corpus_has_at_least_60_kernels():
    assert len(CORPUS) >= 60, f"{len(CORPUS)} kernels in tests/upstream/"


@pytest.mark.parametrize("path", CORPUS, ids=_stem)
def test_header_is_complete(path: Path):
    h = header(path)
    missing = [k for k in REQUIRED if not h.get(k)]
    assert not missing, f"{path.name}: header lacks {missing}"
    assert _UPSTREAM.match(h["upstream"]), f"{path.name}: upstream is {h['upstream']!r}"
    name, params = h["function"].split(";", 1)
    assert params.strip().startswith("params:"), f"{path.name}: function line {h['function']!r}"
    assert re.search(rf"^\s*def {re.escape(name.strip())}\(", path.read_text(), re.M), \
        f"{path.name}: no function {name.strip()!r} in the file"
    exp = parse_expectation(path.read_text(), str(path))
    assert exp.ok != bool(exp.errors), f"{path.name}: expect ok or errors, not both/neither"
    assert (blockers(path) == []) == exp.ok, \
        f"{path.name}: blocked-by must be 'none' exactly when the kernel verifies"
    unknown = [b for b in blockers(path) if b not in constructs(path)]
    assert not unknown, f"{path.name}: blocked by {unknown}, not among its constructs"
    config = header(path).get("tilelang-config")
    if config is not None:
        assert re.fullmatch(r"[\w.]+=\w+(, [\w.]+=\w+)* \(.+\)", config), \
            f"{path.name}: tilelang-config {config!r} is not `KEY=VALUE, ... (why)`"
    bound = bound_expectation(path)
    assert (bound is None) == ("bound-blocked-by" not in h), \
        f"{path.name}: `# bound:` and `# bound-blocked-by:` come together"
    if bound is not None:
        assert "factory-param-without-default" in constructs(path) or \
            "function-param" in constructs(path), f"{path.name}: bound, but not a factory"
        assert bound.ok != bool(bound.errors), f"{path.name}: bound ok or errors"
        assert (blockers(path, "bound-blocked-by") == []) == bound.ok
        unknown = [b for b in blockers(path, "bound-blocked-by") if b not in constructs(path)]
        assert not unknown, f"{path.name}: bound blocked by {unknown}, not among its constructs"


@pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(),
                    reason="TILELANG_MIRROR does not name a clone of TileLang")
@pytest.mark.parametrize("path", CORPUS, ids=_stem)
def test_upstream_path_and_commit_exist(path: Path):
    upstream_path, commit = _UPSTREAM.match(header(path)["upstream"]).groups()
    done = subprocess.run(["git", "-C", str(MIRROR), "show", f"{commit}:{upstream_path}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{path.name}: {commit}:{upstream_path}: {done.stderr}"
    name = header(path)["function"].split(";")[0].strip()
    assert re.search(rf"def {re.escape(name)}\(", done.stdout), \
        f"{path.name}: {upstream_path} has no function {name}"


def test_every_kernel_has_a_reference():
    names = {p.stem for p in CORPUS}
    assert names == set(references()), (
        f"without a reference: {sorted(names - set(references()))}; "
        f"references without a kernel: {sorted(set(references()) - names)}")


@pytest.mark.parametrize("path", [p for p in CORPUS if p not in VERIFIED], ids=_stem)
def test_reference_of_a_refused_kernel_runs(path: Path):
    """The tool cannot read these yet, so the reference's own inputs stand for the
    kernel's parameters: every output it computes is one of them, with their shape."""
    ref = references()[path.stem]
    assert ref.inputs is not None, f"{path.name}: a refused kernel needs its inputs"
    values = ref.inputs(np.random.default_rng([0, 25]))
    for name, value in ref.outputs(values).items():
        assert name in values, f"{path.name}: output {name} is not a parameter"
        assert np.shape(value) == np.shape(values[name]), \
            f"{path.name}: {name} has shape {np.shape(value)}, the parameter {values[name].shape}"


# ----------------------------------------------------------------------------- check


def _verdict(path: Path, expected, source: str | None):
    report = pipeline.check(str(path), source=source)
    errors = [(d.code, d.span.line, d.span.col) if d.span else (d.code, 0, 0)
              for d in report.diagnostics if d.is_error]
    shown = "\n".join(f"  {d.code} at {d.span.line if d.span else 0}: {d.message}"
                      for d in report.diagnostics)
    missing, unexpected = unmatched(expected.errors, errors)
    assert not missing and not unexpected, \
        f"{path.name}: expected {expected.errors}, got:\n{shown or '  none'}"
    want = pipeline.EXIT_REJECTED if expected.errors else pipeline.EXIT_OK
    assert report.exit_code == want, f"{path.name}: exit {report.exit_code}\n{shown}"


@pytest.mark.parametrize("path", CORPUS, ids=_stem)
def test_check_gives_the_recorded_verdict(path: Path):
    _verdict(path, parse_expectation(path.read_text(), str(path)), None)


# Kernels whose check runs every block (blocks that meet through atomics, a split-K's
# partial sums) and takes 5 s or more on two cores: checked whole at night
# (VERIFY_NIGHTLY=1, tests/cuda_env.NIGHTLY), skipped by the default run to keep it under
# 10 minutes. Measured on the CI machine, 2026-12-03.
HEAVY = {"gemv_splitk_vectorized", "gemv_splitk", "gemv_naive_splitk", "rms_norm_splitk",
         "rms_norm", "gemv_naive", "gemm_splitk_vectorized_atomic", "gemm_splitk", "gemm"}


def _light(path: Path) -> None:
    if path.stem in HEAVY and not NIGHTLY:
        pytest.skip(f"{path.stem} runs every block (5 s or more): nightly, VERIFY_NIGHTLY=1")


@pytest.mark.parametrize("path", BOUND, ids=_stem)
def test_check_of_the_bound_factory_gives_the_recorded_verdict(path: Path):
    _light(path)
    _verdict(path, bound_expectation(path), bound_source(path))


def _plans(loaded):
    """canonical, and fast where the planner proves it (a refusal is not a case)."""
    plans = {"canonical": pipeline.make_plan(loaded, "canonical")}
    try:
        plans["fast"] = pipeline.make_plan(loaded, "fast")
    except DiagnosticError:
        pass
    return plans


def load(path: Path) -> pipeline.Loaded:
    return pipeline.load(str(path), None, source_of(path))


@pytest.mark.parametrize("path", RUNNABLE, ids=_stem)
def test_interpreter_and_simulator_equal_the_reference(path: Path):
    _light(path)
    loaded = load(path)
    values = reference_inputs(path, loaded)
    interp = pipeline.run_backend(loaded, "interp", {k: v.copy() for k, v in values.items()})
    failures = compare("interp", path, interp.outputs, interp.bounds, values)
    for name, plan in _plans(loaded).items():
        sim = pipeline.simulate_plan(plan, name, {k: v.copy() for k, v in values.items()})
        assert not sim.violations, f"{path.name} sim/{name}: {sim.violations}"
        failures += compare(f"sim/{name}", path, sim.outputs, interp.bounds, values)
    assert not failures, f"{path.name}:\n" + "\n".join(failures)


# ----------------------------------------------------------------------------- nvcc, GPU


@pytest.mark.nvcc
@pytest.mark.skipif(nvcc() is None, reason="nvcc is not on PATH")
def test_generated_cuda_compiles():
    """Every verified kernel in both plans (the HEAVY ones at night), in one translation
    unit (nvcc costs seconds per process)."""
    from cuda_env import batch_unit
    from verify_reducer.codegen.cuda import compile_arch, render
    units = {}
    for path in (p for p in RUNNABLE if NIGHTLY or p.stem not in HEAVY):
        loaded = load(path)
        for name, plan in _plans(loaded).items():
            stem = re.sub(r"\W", "_", f"{path.stem}_{name}")
            units[f"{path.stem}/{name}"] = render(plan, kernel_name=f"{stem}_kernel").source
    text = batch_unit(list(units.values()))
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "corpus.cu"
        unit.write_text(text)
        # sm_90a where a kernel issues wgmma (codegen.cuda.compile_arch)
        done = subprocess.run([nvcc(), f"-arch={compile_arch('sm_90', text)}", "-cubin",
                               "-fmad=false", "-o",
                               str(Path(tmp) / "corpus.cubin"), str(unit)],
                              capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"nvcc failed on the corpus:\n{done.stderr[-4000:]}"


def _gpu_cases():
    return [pytest.param(p, plan, id=f"{p.stem}-{plan}") for p in RUNNABLE
            for plan in ("canonical", "fast")]


@pytest.mark.gpu
@pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")
@pytest.mark.parametrize("path, planner", _gpu_cases())
def test_cuda_equals_the_reference(path: Path, planner: str):
    loaded = load(path)
    plans = _plans(loaded)
    if planner not in plans:
        pytest.skip(f"the fast plan is not proved for {path.name}")
    values = reference_inputs(path, loaded)
    bounds = pipeline.oracle(loaded, values).bounds
    run = pipeline.run_backend(loaded, "cuda", values, planner)
    failures = compare(f"cuda/{planner}", path, run.outputs, bounds, values)
    assert not failures, f"{path.name}:\n" + "\n".join(failures)


@pytest.mark.gpu
@pytest.mark.tilelang
@pytest.mark.parametrize("path", RUNNABLE, ids=_stem)
def test_tilelang_equals_the_reference(path: Path):
    """TileLang runs the kernel as its authors call it, the way tests/upstream_tilelang.py
    measures the corpus: in a process of its own with a timeout (a hang or a fault ends
    that kernel only), an `@autotune` wrapper bypassed (run through it, the autotuner
    compiled and timed gemv_alloc_reducer's 720 configurations: the GPU suite's shard
    hung), the header's params and pass configs applied, and judged exactly against the
    interpreter's bound, as test_interpreter_equals_the_reference judges ours. A kernel
    TileLang refuses to compile is skipped with TileLang's message (recorded, never a
    pass); one this script cannot run fails."""
    import upstream_tilelang
    from verify_reducer.codegen import tilelang_backend
    problem = tilelang_backend.unavailable_reason()
    if problem is not None:
        pytest.skip(problem)
    row = upstream_tilelang.run_one_in_subprocess(path)
    if row.outcome == "compile error":                   # TileLang's own refusal
        pytest.skip(f"TileLang cannot build it: {row.result}")
    assert row.judged == "exact", row
    assert row.outcome == "equal", f"{path.name}: {row.result}\n" + "\n".join(row.detail)


# ----------------------------------------------------------------------------- docs


def _rate(n: int) -> str:
    return f"{n} of {len(CORPUS)} ({100 * n / len(CORPUS):.0f} %)"


def corpus_table() -> str:
    """docs/limits.md's table, from the headers: each construct that refuses a kernel,
    with how many it refuses today and how many it still refuses once the factory's
    parameters are bound (the bound check where a kernel has one, else today's), most
    first; then the acceptance rates."""
    today = Counter(b for p in CORPUS for b in blockers(p))
    bound = Counter(b for p in CORPUS
                    for b in blockers(p, "bound-blocked-by" if p in BOUND else "blocked-by"))
    rows = ["| construct | kernels it refuses today | once factory parameters are bound |",
            "|---|---|---|"]
    rows += [f"| {name} | {today[name]} | {bound[name]} |" for name in
             sorted(set(today) | set(bound), key=lambda n: (-today[n], -bound[n], n))]
    return "\n".join(rows) + (f"\n\nVerified today: {_rate(len(VERIFIED))}; with the "
                              f"factories' parameters bound: {_rate(len(RUNNABLE))}.")


def test_limits_md_table_matches_the_headers():
    text = LIMITS.read_text()
    m = re.search(r"<!-- upstream-table -->\n(.*?)\n<!-- /upstream-table -->", text, re.S)
    assert m, "docs/limits.md has no upstream table markers"
    assert m.group(1).strip() == corpus_table(), \
        f"docs/limits.md is stale; the headers give:\n{corpus_table()}"
    section = text[text.index("## The upstream corpus"):]
    named = set(re.findall(r"^- `([^`]+)`:", section, re.M))
    listed = set(re.findall(r"^\| (\S+) \| \d+ \| \d+ \|$", m.group(1), re.M))
    assert listed <= named, f"docs/limits.md does not say what {sorted(listed - named)} are"
