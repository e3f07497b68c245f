"""TileLang itself on every kernel of the upstream corpus (tests/upstream/), against the
numpy references: the numbers issue 25's closing note quotes beside our own verdicts.

    python3 tests/upstream_tilelang.py [--jobs N] [--only NAME...] [--json OUT]

Run on the GPU machine (TileLang, torch, a CUDA device; `source .gpu/setup-device.sh`).
Not a pytest file (pytest must not collect it): tests/test_upstream.py's
test_tilelang_equals_the_reference runs only what our frontend verifies, through
codegen/tilelang_backend.py; this runs all of them, the kernels we refuse included, the
way their authors call them. Like that backend it executes the kernel files (TileLang's
frontend is Python execution); verify-reducer itself never does.

Each kernel runs in a subprocess of its own (a CUDA fault or a hang ends only that one;
TIMEOUT_S each), --jobs at a time, with TileLang's kernel cache off unless
TILELANG_DISABLE_CACHE is set (every kernel compiled now, by this TileLang). Per kernel:

- the kernel, as its header names it (`# function: NAME; params: ...`):
  a module-level `@T.prim_func` is that attribute of the imported file; a factory (plain
  or `@tilelang.jit`) is called with the header's params, evaluated in the module's
  namespace, those its signature takes (the call tests/test_upstream.bound_source
  appends, made after the import so that the header's pass configs can reach a
  `@tilelang.jit` before it compiles, and an `@autotune` wrapper is bypassed: the
  kernel measured is the one our frontend reads, defaults as written). A plain factory
  returns a prim_func; a lazy `@tilelang.jit` a compiled JITKernel (outputs named by its
  out_idx are returned, the other parameters passed); an eager `@tilelang.jit` (its body
  holds the `with T.Kernel`, spec/frontend/eager.py) is called with torch tensors for
  its tensor parameters (annotated in its body) and returns its `T.empty` outputs in the
  order of its `return` statement.
- compile flags: `-fmad=false` (tilelang_backend.COMPILE_FLAGS, after the kernel's own),
  as our CUDA and the reference round; pass configs: the header's `# tilelang-config:`
  (tests/test_upstream.tilelang_config),
  typed as `--tilelang-config` types them, over the `@tilelang.jit`'s own.
- inputs: the reference's (tests/upstream/references.py), through our frontend's input
  preparation where it reads the kernel; each tensor in the dtype TileLang's prim_func
  declares (bfloat16 and float8 values lie on their grids: exact), outputs included.
- judged: where our check verifies the kernel (today, or once the factory's parameters
  are bound) with the exact judge of tests/test_upstream.py (the interpreter's bound plus
  the rounding of numpy's value to the output dtype); elsewhere with TOLERANCE below
  (the table says "tolerance" for those rows).

One row per kernel: our verdicts (from the headers), TileLang's result (equal / differs:
N of M elements, max error / compile error / run error / not runnable / judge error,
each with the first line of why; a hang is named by the stage it hung in) and the wall time of TileLang's part (import, compile, run); a
markdown table sorted by kernel on stdout, then the summary line; --json OUT writes the
rows with each output's detail. Exit status 0 once every kernel has a row, 2 for bad
arguments or a machine where TileLang cannot run."""
from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_upstream as corpus                       # noqa: E402  (tests/ on the path)
from verify_reducer.codegen import tilelang_backend  # noqa: E402
from verify_reducer.spec.dtypes import DType, lookup  # noqa: E402
from verify_reducer.verify.oracle import pipeline    # noqa: E402

TIMEOUT_S = 240
TOLERANCE = ("|got - want| <= k * eps * max(|want|, max|want| / 16), eps the output "
             "dtype's machine epsilon, k = 8 (float16, bfloat16, float32, float64) or 1 "
             "(float8: one step of its grid); integers exact; NaN matches NaN")
_STAGE = "upstream_tilelang: stage "


class Outcome(Exception):
    """Why a kernel has no judged outputs: kind is "compile error" (TileLang's frontend
    or compiler raised), "run error" (the kernel raised, faulted or hung), "not runnable"
    (this script cannot call it: no value for a parameter, a dtype we do not model) or
    "judge error" (the reference or the interpreter's bound failed: our bug); detail is
    the whole message (the row shows its first line)."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


@dataclass
class Row:
    kernel: str
    today: str                 # our check of the file: "ok" or "refused: constructs"
    bound: str                 # with the factory's parameters bound, or "—"
    judged: str                # "exact" or "tolerance"
    outcome: str               # equal | differs | an Outcome's kind
    result: str                # the table's cell: outcome and its first line of detail
    wall_s: float
    detail: list[str] = field(default_factory=list)
    tilelang: str = ""

    def cells(self) -> list[str]:
        return [self.kernel, self.today, self.bound, self.result, self.judged,
                f"{self.wall_s:.1f}"]


# ----------------------------------------------------------------------------- headers

def our_verdicts(path: Path) -> tuple[str, str]:
    """(today, bound) as the headers record them; bound is "—" for a kernel with no bound
    check (its parameters are bound already, or it is no factory)."""
    def verdict(blocked: list[str]) -> str:
        return "ok" if not blocked else "refused: " + ", ".join(blocked)
    today = verdict(corpus.blockers(path))
    if corpus.bound_expectation(path) is None:
        return today, "—"
    return today, verdict(corpus.blockers(path, "bound-blocked-by"))


def verified(path: Path) -> bool:
    """Whether our check verifies the kernel, today or bound (then the judge is exact)."""
    bound = corpus.bound_expectation(path)
    return corpus.expected_ok(path) or (bound is not None and bound.ok)


def header_call(path: Path) -> tuple[str, str]:
    """(function name, params text) of `# function: NAME; params: TEXT[; defaults ...]`;
    TEXT is "" for `params: none`."""
    name, rest = corpus.header(path)["function"].split(";", 1)
    params = rest.split(";", 1)[0].strip()
    assert params.startswith("params:"), f"{path.name}: function line {rest!r}"
    params = params[len("params:"):].strip()
    return name.strip(), "" if params == "none" else params


@dataclass(frozen=True)
class Kind:
    """How the header's function is run: style is "prim_func" (a module-level
    @T.prim_func), "factory" (plain), "jit" (a lazy @tilelang.jit) or "eager"; for
    eager, its tensor parameters and the names its `return` gives, in order."""
    name: str
    style: str
    tensors: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()


def kernel_kind(path: Path) -> Kind:
    """Read from the file's AST (never executed here)."""
    name, _ = header_call(path)
    tree = ast.parse(path.read_text(), str(path))
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        raise Outcome("not runnable", f"no module-level function {name} in {path.name}")
    node = found[0]
    decorators = [ast.unparse(d.func if isinstance(d, ast.Call) else d)
                  for d in node.decorator_list]
    if any(d.endswith("prim_func") for d in decorators):
        return Kind(name, "prim_func")
    if not any(d.endswith("jit") for d in decorators):
        return Kind(name, "factory")
    if not any(isinstance(s, ast.With) and s.items and isinstance(s.items[0].context_expr,
               ast.Call) and ast.unparse(s.items[0].context_expr.func).endswith(".Kernel")
               for s in node.body):
        return Kind(name, "jit")
    annotated = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                 and isinstance(s.target, ast.Name)
                 and any(t in ast.unparse(s.annotation) for t in ("Tensor", "Buffer", "ptr"))}
    tensors = tuple(a.arg for a in node.args.args + node.args.kwonlyargs
                    if a.arg in annotated)       # in signature order, as TileLang's
    return Kind(name, "eager", tensors, _returned_names(path, node))


def _returned_names(path: Path, node: ast.FunctionDef) -> tuple[str, ...]:
    returns = [s.value for s in node.body if isinstance(s, ast.Return) and s.value]
    if not returns:
        return ()
    value = returns[-1]
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    if not all(isinstance(i, ast.Name) for i in items):
        raise Outcome("not runnable", f"{path.name}:{value.lineno}: `return "
                      f"{ast.unparse(value)}` does not name its outputs")
    return tuple(i.id for i in items)


# ----------------------------------------------------------------------------- one kernel

def measure(path: Path) -> Row:
    """The row of one kernel (in this process; main() runs each in its own)."""
    today, bound = our_verdicts(path)
    exact = verified(path)
    row = Row(path.stem, today, bound, "exact" if exact else "tolerance", "", "", 0.0)
    try:
        row.detail = _measured(path, exact, row)
    except Exception as exc:
        # TileLang's own failures arrive as Outcomes; anything else is this script's,
        # the reference's or the interpreter's, named by the stage it happened in
        failed = exc if isinstance(exc, Outcome) else \
            Outcome(_UNEXPECTED[_current_stage], _message(exc))
        row.outcome, row.result = failed.kind, f"{failed.kind}: {first_line(failed.detail)}"
        row.detail = [failed.detail[-4000:]]
        return row
    bad = [d for d in row.detail if not d.startswith("equal")]
    row.outcome = "differs" if bad else "equal"
    row.result = "equal" if not bad else "differs: " + "; ".join(bad)
    return row


def _measured(path: Path, exact: bool, row: Row) -> list[str]:
    _stage("inputs")
    loaded = _load_ours(path) if exact else None
    values = _inputs(path, loaded)
    setup = _setup(path)
    row.tilelang = setup.version
    start = time.monotonic()
    try:
        outputs = run_kernel(path, kernel_kind(path), values, setup.pass_configs)
    finally:
        row.wall_s = time.monotonic() - start
    _stage("judge")
    want = corpus.references()[path.stem].outputs(values)
    bounds = pipeline.oracle(loaded, values).bounds if exact else None
    return judge_all(outputs, want, bounds)


# what an exception that is not TileLang's means at each stage
_UNEXPECTED = {"start": "not runnable", "inputs": "not runnable", "import": "not runnable",
               "compile": "not runnable", "run": "not runnable", "judge": "judge error"}
_current_stage = "start"


def _stage(name: str) -> None:
    """Told to the parent on stderr: a kernel that times out is reported at its stage."""
    global _current_stage
    _current_stage = name
    print(_STAGE + name, file=sys.stderr, flush=True)


def _setup(path: Path) -> tilelang_backend.TileLangSetup:
    """TileLang's version and the header's pass configs, typed."""
    try:
        return tilelang_backend.prepare(corpus.tilelang_config(path))
    except (tilelang_backend.TileLangUnavailable, tilelang_backend.PassConfigError) as exc:
        raise Outcome("not runnable", str(exc)) from exc


def _load_ours(path: Path) -> pipeline.Loaded:
    try:
        return corpus.load(path)
    except Exception as exc:                      # the header says it verifies
        raise Outcome("not runnable", f"our frontend does not load it, although its "
                      f"header says it verifies: {exc}") from exc


def _inputs(path: Path, loaded) -> dict[str, np.ndarray]:
    """Every parameter's initial value: through our frontend's input preparation where it
    reads the kernel (as tests/test_upstream.py does), else the reference's own."""
    if loaded is not None:
        return corpus.reference_inputs(path, loaded)
    ref = corpus.references()[path.stem]
    if ref.inputs is None:
        raise Outcome("not runnable", "its reference gives no inputs and our frontend "
                      "does not read the kernel")
    return ref.inputs(np.random.default_rng([0, 25]))


def run_kernel(path: Path, kind: Kind, values: dict[str, np.ndarray],
               pass_configs: dict[str, object]) -> dict[str, tuple[np.ndarray, DType]]:
    """Every output TileLang gives (returned ones and tensors written in place): name ->
    (numpy array in our storage dtype, the dtype TileLang declares)."""
    tilelang, torch = tilelang_backend._runtime()
    with contextlib.redirect_stdout(sys.stderr):  # TileLang logs on stdout
        _stage("import")
        try:
            module = tilelang_backend.load_program_module(str(path))
        except Exception as exc:
            raise Outcome("compile error", f"importing the file: {_message(exc)}") from exc
        target = getattr(module, kind.name, None)
        if target is None:
            raise Outcome("not runnable", f"the imported file has no {kind.name}")
        if kind.style == "prim_func":
            return _run_prim_func(tilelang, torch, target, values, pass_configs)
        if kind.style in ("jit", "eager"):
            target = _jit_with(target, pass_configs)
        params = _call_params(path, module, target, exclude=kind.tensors)
        if kind.style == "eager":
            return _run_eager(torch, target, kind, params, values)
        _stage("compile")
        try:
            made = target(**params)
        except Exception as exc:
            raise Outcome("compile error", f"{kind.name}(...): {_message(exc)}") from exc
        if isinstance(made, tilelang_backend._prim_func_types()):
            return _run_prim_func(tilelang, torch, made, values, pass_configs)
        if callable(made) and hasattr(made, "prim_func"):
            return _run_compiled(torch, made, made.prim_func, values)
        raise Outcome("not runnable", f"{kind.name}(...) returned a "
                      f"{type(made).__name__}, neither a prim_func nor a compiled kernel")


def _jit_with(jit, pass_configs: dict[str, object]):
    """The @tilelang.jit object without an @autotune around it (the autotuner would try
    other configurations than the defaults our frontend reads), the header's pass
    configs laid over its own, compiled with tilelang_backend.COMPILE_FLAGS (no fused
    multiply-add, as the reference rounds) after its own flags."""
    jit = getattr(jit, "jit_impl", jit)
    if pass_configs:
        jit.pass_configs = {**dict(jit.pass_configs or {}), **pass_configs}
    own = jit.compile_flags
    own = [own] if isinstance(own, str) else list(own or [])
    jit.compile_flags = own + list(tilelang_backend.COMPILE_FLAGS)
    return jit


def _call_params(path: Path, module, factory, exclude=()) -> dict[str, object]:
    """The header's params the factory's signature takes, evaluated in the module's
    namespace (they are Python expressions: `T.float16`, `'sum'`, `T.reduce_max`)."""
    _, text = header_call(path)
    try:
        given = eval(f"dict({text})", vars(module)) if text else {}   # noqa: S307
    except Exception as exc:
        raise Outcome("not runnable", f"the header's params ({text}) do not evaluate in "
                      f"the module: {_message(exc)}") from exc
    # a @tilelang.jit keeps its function's signature; a plain factory is the function
    signature = getattr(factory, "signature", None) or inspect.signature(factory)
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        names = set(given) - set(exclude)
    else:
        names = set(signature.parameters) - set(exclude)
    return {k: v for k, v in given.items() if k in names}


def _run_prim_func(tilelang, torch, prim_func, values, pass_configs):
    _stage("compile")
    try:
        kernel = tilelang.compile(prim_func, out_idx=None, target="cuda",
                                  pass_configs=dict(pass_configs) or None,
                                  compile_flags=list(tilelang_backend.COMPILE_FLAGS))
    except Exception as exc:
        raise Outcome("compile error", _message(exc)) from exc
    return _run_compiled(torch, kernel, prim_func, values)


def _run_compiled(torch, kernel, prim_func, values):
    """Call a compiled kernel with every parameter but its outputs (out_idx), in the
    prim_func's order; the outputs come back as its return value."""
    params = _signature(prim_func, values)
    results = [params[i] for i in _result_indices(kernel, len(params))]
    tensors = {p.name: _tensor(torch, values, p) for p in params if p not in results}
    _stage("run")
    try:
        returned = kernel(*tensors.values())
        torch.cuda.synchronize()
    except Exception as exc:
        raise Outcome("run error", _message(exc)) from exc
    tensors.update(zip([p.name for p in results], _as_list(returned, len(results))))
    return {p.name: (tilelang_backend._from_torch(torch, tensors[p.name], p.dtype), p.dtype)
            for p in params if p.dtype is not None}


def _run_eager(torch, jit, kind: Kind, params, values):
    """Call an eager @tilelang.jit as its author does: tensors for its tensor
    parameters, its other parameters by name; it returns its outputs."""
    missing = [n for n in kind.tensors if n not in values]
    if missing:
        raise Outcome("not runnable", f"the reference has no value for {missing}")
    _stage("compile")
    try:   # the traced prim_func (shapes from the tensors), for its parameters' dtypes
        shaped = {n: torch.from_numpy(np.ascontiguousarray(values[n])) for n in kind.tensors}
        prim_func = jit.get_tir(**shaped, **params)
    except Exception as exc:
        raise Outcome("compile error", f"tracing {kind.name}: {_message(exc)}") from exc
    by_name = {p.name: p for p in _signature(prim_func, values)}
    unknown = [n for n in kind.tensors + kind.returns if n not in by_name]
    if unknown:
        raise Outcome("not runnable", f"TileLang's prim_func of {kind.name} has no "
                      f"parameter {unknown} (it has {list(by_name)})")
    tensors = {n: _tensor(torch, values, by_name[n]) for n in kind.tensors}
    _stage("run")
    try:
        returned = jit(**tensors, **params)
        torch.cuda.synchronize()
    except Exception as exc:
        raise Outcome("run error", _message(exc)) from exc
    tensors.update(zip(kind.returns, _as_list(returned, len(kind.returns))))
    return {n: (tilelang_backend._from_torch(torch, t, by_name[n].dtype), by_name[n].dtype)
            for n, t in tensors.items()}


@dataclass(frozen=True)
class _Param:
    name: str
    dtype: DType | None        # None for a scalar parameter
    shape: tuple | None


def _signature(prim_func, values) -> list[_Param]:
    """TileLang's parameters in order, each with our DType of its declared dtype and its
    shape (a symbolic dimension takes the reference value's)."""
    out = []
    for var in prim_func.params:
        buffer = prim_func.buffer_map[var] if var in prim_func.buffer_map else None
        if buffer is None:
            out.append(_Param(str(getattr(var, "name", var)), None, None))
            continue
        dtype = lookup(str(buffer.dtype))
        if dtype is None:
            raise Outcome("not runnable", f"{buffer.name}: dtype {buffer.dtype} has no "
                          f"numpy model here (spec/dtypes.py)")
        given = np.shape(values[buffer.name]) if buffer.name in values else None
        shape = tuple(_static(d, given, i) for i, d in enumerate(buffer.shape))
        out.append(_Param(str(buffer.name), dtype, shape))
    return out


def _static(dim, given, i):
    try:
        return int(dim)
    except Exception:                  # a symbolic dimension (TVM raises its own error)
        return None if given is None else given[i]


def _tensor(torch, values, param: _Param):
    if param.name not in values:
        raise Outcome("not runnable", f"the reference has no value for parameter "
                      f"{param.name}")
    value = np.asarray(values[param.name])
    if param.dtype is None:                         # a scalar parameter
        return value.item()
    if value.size != math.prod(param.shape):
        raise Outcome("not runnable", f"the reference's {param.name} has shape "
                      f"{value.shape}, TileLang's {param.shape}")
    return tilelang_backend._to_torch(torch, value, param)


def _result_indices(kernel, count: int) -> list[int]:
    indices = getattr(kernel, "out_idx", None)
    indices = [] if indices is None else [indices] if isinstance(indices, int) else indices
    return [i % count for i in indices]     # in out_idx's order: the order returned


def _as_list(returned, count: int) -> list:
    if count == 0:
        return []
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    if len(items) != count:
        raise Outcome("run error", f"the kernel returned {len(items)} values for "
                      f"{count} outputs")
    return items


def _message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


def first_line(text: str) -> str:
    """The line of an error that says what went wrong: TVM's messages carry tracebacks
    and `[bt]` frames before (or after) it."""
    noise = ("Traceback", "File ", "[bt]", "During handling", "The above exception")
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    useful = [s for s in lines
              if (core := re.sub(r"^\w+(Error|Exception):\s*", "", s))
              and not core.startswith(noise) and not core[:1].isdigit()]
    line = (useful or lines or ["(no message)"])[0]
    return line if len(line) <= 160 else line[:157] + "..."


# ----------------------------------------------------------------------------- judging

def judge_all(outputs, want, bounds) -> list[str]:
    """One line per reference output: "equal NAME" or "NAME: N of M elements, max error
    E". bounds: the interpreter's (the exact judge), or None (TOLERANCE)."""
    lines = []
    for name, w in want.items():
        if name not in outputs:
            lines.append(f"{name}: TileLang gives no such output")
            continue
        got, dtype = outputs[name]
        w = np.asarray(w).reshape(got.shape)
        ok = (corpus.agreement(got, w, bounds[name]) if bounds is not None
              else within_tolerance(got, w, dtype))
        if ok.all():
            lines.append(f"equal {name}")
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(got.astype(np.float64) - w.astype(np.float64))[~ok]
        worst = "nan" if np.isnan(err).all() else f"{np.nanmax(err):.3g}"
        lines.append(f"{name}: {int((~ok).sum())} of {ok.size} elements, max error {worst}")
    return lines


def within_tolerance(got: np.ndarray, want: np.ndarray, dtype: DType) -> np.ndarray:
    """TOLERANCE, elementwise, for an output TileLang declares of dtype."""
    if not dtype.is_float:
        return got.astype(np.int64) == np.asarray(want).astype(np.int64)
    want = np.asarray(want, np.float64)
    g = got.astype(np.float64)
    k, eps = (1 if dtype.is_float8 else 8), 2.0 * dtype.unit_roundoff
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.abs(want[np.isfinite(want)])
        floor = (finite.max() if finite.size else 0.0) / 16
        close = np.abs(g - want) <= k * eps * np.maximum(np.abs(want), floor)
    return close | (g == want) | (np.isnan(g) & np.isnan(want))


# ----------------------------------------------------------------------------- the corpus

def run_one_in_subprocess(path: Path, timeout_s: int = TIMEOUT_S) -> Row:
    """measure(path) in a process of its own (its own session: a timeout kills nvcc
    and whatever else it started too)."""
    today, bound = our_verdicts(path)
    judged = "exact" if verified(path) else "tolerance"
    env = dict(os.environ)
    env.setdefault("TILELANG_DISABLE_CACHE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(path), str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout_s)
            why = None
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            why = f"no result within {timeout_s} s"
        if why is None and out.exists():
            return Row(**json.loads(out.read_text()))
        stage = _last_stage(err)
        why = why or f"the process died (exit {proc.returncode}): " \
                     f"{first_line(_tail_message(err))}"
        kind = _AT_STAGE[stage]
        return Row(path.stem, today, bound, judged, kind, f"{kind}: {why} (stage: {stage})",
                   time.monotonic() - start, [err[-4000:]])


# what a hang or a dead process means at the stage it was in
_AT_STAGE = {"start": "not runnable", "inputs": "not runnable", "import": "compile error",
             "compile": "compile error", "run": "run error", "judge": "judge error"}


def _run_and_tell(path: Path) -> Row:
    row = run_one_in_subprocess(path)
    print(f"{row.kernel}: {row.result} ({row.wall_s:.1f} s)", file=sys.stderr, flush=True)
    return row


def _last_stage(err: str) -> str:
    stages = [line[len(_STAGE):].strip() for line in err.splitlines()
              if line.startswith(_STAGE)]
    return stages[-1] if stages else "start"


def _tail_message(err: str) -> str:
    lines = [s for s in err.splitlines() if s.strip() and not s.startswith(_STAGE)]
    return "\n".join(lines[-3:]) or "(nothing on stderr)"


def table(rows: list[Row]) -> str:
    head = ["kernel", "ours today", "ours bound", "TileLang", "judged", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |"
              for r in sorted(rows, key=lambda r: r.kernel)]
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    equal = sum(r.outcome == "equal" for r in rows)
    today = sum(r.today == "ok" for r in rows)
    bound = sum(r.today == "ok" or r.bound == "ok" for r in rows)
    return (f"TileLang equals the reference on {equal} of {len(rows)}; our check verifies "
            f"{today} (today) / {bound} (bound)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=8, help="kernels at a time (8)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these kernels only")
    parser.add_argument("--json", metavar="OUT", help="write the rows as JSON to OUT")
    parser.add_argument("--child", nargs=2, metavar=("KERNEL", "ROW"),
                        help=argparse.SUPPRESS)      # one kernel, its row to ROW
    args = parser.parse_args(argv)
    if args.child:
        row = measure(Path(args.child[0]))
        Path(args.child[1]).write_text(json.dumps(asdict(row)))
        return 0
    known = {p.stem: p for p in corpus.CORPUS}
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown or args.jobs < 1:
        parser.error(f"no such kernel in tests/upstream/: {', '.join(unknown)}"
                     if unknown else "--jobs must be at least 1")
    problem = tilelang_backend.unavailable_reason()
    if problem is not None:
        print(f"upstream_tilelang: TileLang cannot run here: {problem}", file=sys.stderr)
        return 2
    paths = [known[n] for n in sorted(set(args.only))] if args.only else corpus.CORPUS
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(_run_and_tell, paths))
    version = next((r.tilelang for r in rows if r.tilelang), "unknown")
    print(f"TileLang {version} on the upstream corpus ({len(rows)} kernels)\n")
    print(table(rows))
    print(f"\nexact: the judge of tests/test_upstream.py (our check verifies the kernel); "
          f"tolerance: {TOLERANCE}. wall s: TileLang's import, compile and run.\n")
    print(summary(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"tilelang": version, "tolerance": TOLERANCE, "summary": summary(rows),
             "rows": [asdict(r) for r in sorted(rows, key=lambda r: r.kernel)]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
