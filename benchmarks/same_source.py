"""What the same-source benchmarks share (gemv_same_source, gemv_splitk, gemm_same_source,
flash_attention): one TileLang file, planned and rendered by us and compiled by TileLang
in the same process, timed the same way beside torch, each output judged once against a
float64 reference within a stated bound.

- `plan_ours`: our plan of a parsed function (`Planned`: the plan, or why there is
  none; its R506 notes; the rendered unit) and, for the dry runs, `ptxas_text` (nvcc's
  registers, spills and shared memory for the unit, without a GPU);
- `Cell`, `measured`: one column's time (µs) or why it has none, and whether its output
  was outside the bound; `rate` is amount / time in tera-units per second (TB/s of bytes,
  TFLOP/s of flops);
- `discover_runtimes`, `time_events`: torch and TileLang where they import, timed by
  codegen.runner.time_launches's method with torch's events;
- `Reference` (a product's float64 value, Higham & Mary's bound on fp32 sums of exact
  products) and `judge` (any output against any exact value and bound);
- `Table`: a benchmark's rows printed as measured, footnotes for every n/a and WRONG,
  the JSON document rewritten after every row; `open_table` starts one where a GPU
  answers; `verdict` judges a target over cases, `best_ratios` the better of our plans
  against other columns;
- `add_run_arguments`, `run`: the options and the dispatch every benchmark's command
  line shares (--repeat, --json, --dry-run; each configuration checked first).
(benchmarks/corpus_kernel.py: a kernel of the upstream corpus, compiled by both.)"""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from verify_reducer.codegen import ptxas, tilelang_backend
from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_fast import FastPlanRefused
from verify_reducer.codegen.resources import kib
from verify_reducer.codegen.runner import run_cuda, time_cuda, time_launches
from verify_reducer.interp.accept import within_bound
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES

OURS = ("fast", "canonical")


def parse_list(text: str, pattern: str, what: str) -> list[tuple[int, ...]]:
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        match = re.fullmatch(pattern, item)
        if not match:
            raise argparse.ArgumentTypeError(f"{item!r} is not a {what}")
        out.append(tuple(int(g) for g in match.groups()))
    return out


# ----------------------------------------------------------------------------- our plans

@dataclass
class Planned:
    plan: object | None            # the PhysicalPlan (None: refused, or not parsed)
    chosen: str                    # the plan in one line, or why there is none
    reason: str | None = None      # why it cannot run (refusal, R506 error, render bug)
    flags: tuple[str, ...] = ()    # its R506 notes (a register warning still runs)
    cuda_lines: int = 0
    unit: str | None = None        # the rendered translation unit

    def summary(self) -> dict:
        res = self.plan.resources if self.plan is not None else None
        return {"chosen": self.chosen, "reason": self.reason, "flags": list(self.flags),
                "cuda_lines": self.cuda_lines, "resources": res and {
                    "target": res.target, "shared_bytes": res.shared_bytes,
                    "dynamic": res.dynamic, "register_words": res.register_words,
                    "register_budget": res.register_budget,
                    "blocks_per_sm_cap": res.occupancy.cap,
                    "launch_shared_bytes": res.launch_shared_bytes}}

    def describe(self) -> str:
        res = self.summary()["resources"]
        text = self.chosen if res is None else (
            f"{self.chosen}; shared {kib(res['shared_bytes'])}"
            f"{' dynamic' if res['dynamic'] else ''}, registers ~{res['register_words']}/"
            f"{res['register_budget']}"
            + (f", at most {res['blocks_per_sm_cap']} blocks per SM (launched with "
               f"{kib(res['launch_shared_bytes'])})" if res['blocks_per_sm_cap'] else "")
            + f"; CUDA {self.cuda_lines} lines")
        return "\n      ".join([text, *self.flags] +
                               ([f"cannot run: {self.reason}"] if res and self.reason else []))


def plan_ours(func, planner: str) -> Planned:
    try:
        plan = plan_func(func, planner)
    except FastPlanRefused as exc:
        why = f"R400 {exc.diagnostic.message}"
        return Planned(None, f"refused: {why}", why)
    except DiagnosticError as exc:
        return Planned(None, f"no plan: {exc}", str(exc))
    chosen = "; ".join(f"all-reduce width {fp.width} scale {fp.scale}, storage "
                       f"{rp.storage.describe()}" for rp in plan.reducers
                       for fp in rp.finalizes) or f"{planner} plan, no reducer"
    flags = tuple(f"{d.severity}[{d.code}]: {d.message}" for d in plan.notes if d.code == "R506")
    reason = "; ".join(f"{d.code} {d.message}" for d in plan.notes if d.is_error) or None
    try:
        unit = render(plan).translation_unit()
    except Exception as exc:       # a renderer bug costs this column, not the run
        return Planned(plan, chosen, reason or f"render: {type(exc).__name__}: {exc}", flags)
    return Planned(plan, chosen, reason, flags, unit.count("\n"), unit)


def ptxas_text(planned: Planned) -> str:
    """nvcc's account of the rendered unit (registers, spills, static shared memory), or
    why there is none: the dry run's proof that the CUDA compiles, without a GPU."""
    if planned.unit is None:
        return "ptxas: nothing rendered"
    arch = planned.plan.resources.target          # the architecture the plan is for
    try:
        figures = ptxas.compile_figures(planned.unit, arch)
    except (ptxas.PtxasUnavailable, ptxas.PtxasFailed) as exc:
        return f"ptxas: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}"
    return "; ".join(f"ptxas ({arch}) {f.kernel}: {f.registers} registers, "
                     f"{f.stack_bytes} bytes stack, {f.spill_stores} bytes spill stores, "
                     f"{f.shared_bytes} bytes static shared" for f in figures.values())


# ----------------------------------------------------------------------------- measuring

@dataclass
class Cell:
    us: float | None = None
    reason: str | None = None      # why nothing was measured
    wrong: str | None = None       # why the output is outside the bound
    error: float | None = None     # the largest |output - reference| / bound
    same_as: str | None = None     # the column whose identical CUDA this cell repeats

    @property
    def usable(self) -> bool:
        return self.us is not None and self.wrong is None

    def rate(self, amount: float) -> float | None:
        """amount per second in tera-units (bytes: TB/s; flops: TFLOP/s)."""
        return amount / self.us / 1e6 if self.us else None

    def summary(self, amount: float, unit: str = "tbps") -> dict:
        return {"us": self.us, unit: self.rate(amount), "reason": self.reason,
                "wrong": self.wrong, "error_over_bound": self.error,
                **({"same_cuda_as": self.same_as} if self.same_as else {})}


def measured(what) -> Cell:
    """what() as a Cell; an exception becomes the cell's reason (one column lost), its
    traceback goes to stderr (a GPU run is too scarce to repeat for a stack)."""
    try:
        return what()
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return Cell(reason=f"{type(exc).__name__}: {str(exc).strip()}".splitlines()[0][:400])


@dataclass
class Runtimes:
    torch: object = None
    tilelang: object = None
    missing: dict = field(default_factory=dict)        # what -> why it cannot run
    pass_configs: dict = field(default_factory=dict)   # TileLang column -> its configs
    environment: dict = field(default_factory=dict)


def discover_runtimes(tilelang_columns: dict[str, dict]) -> Runtimes:
    """torch with a device, and TileLang per column with that column's pass configs
    (checked against the keys TileLang registers); rt.missing says what cannot run."""
    rt = Runtimes()
    if importlib.util.find_spec("pycuda") is None:
        rt.missing["pycuda"] = "pycuda is not installed"
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device is available to torch")
        rt.torch = torch
        rt.environment.update(torch=torch.__version__, device=torch.cuda.get_device_name())
    except Exception as exc:       # ImportError, or no device
        rt.missing["torch"] = f"torch: {type(exc).__name__}: {exc}"
    why = tilelang_backend.unavailable_reason()
    for col, given in tilelang_columns.items():
        if why:
            rt.missing[col] = why
            continue
        try:               # the backend checks each key against those TileLang registers
            setup = tilelang_backend.prepare(given)
        except tilelang_backend.PassConfigError as exc:
            rt.missing[col] = str(exc)
            continue
        import tilelang
        rt.tilelang, rt.pass_configs[col] = tilelang, setup.pass_configs
        rt.environment["tilelang"] = setup.version
    return rt


def ours_cell(planned: Planned, data: dict, judge_outputs, repeat: int) -> Cell:
    """Our plan run once (its outputs judged: judge_outputs(outputs) -> (error, wrong))
    and timed."""
    if planned.reason:
        return Cell(reason=planned.reason)
    error, wrong = judge_outputs(run_cuda(planned.plan, data))
    return Cell(time_cuda(planned.plan, data, repeat), wrong=wrong, error=error)


def twins(planned: dict[str, Planned]) -> dict[str, str | None]:
    """Each plan's earlier plan with the same rendered CUDA, or None: one kernel is
    compiled and timed once, whatever the plans are called."""
    found: dict[str, str | None] = {}
    for name, p in planned.items():
        found[name] = next((q for q in found if found[q] is None and p.unit is not None
                            and planned[q].unit == p.unit), None)
    return found


def ours_cells(planned: dict[str, Planned], data: dict, judge_outputs,
               repeat: int) -> dict[str, Cell]:
    """A cell per plan; a plan that renders the same CUDA as one before it repeats that
    one's cell (same_as) instead of timing one kernel twice."""
    cells: dict[str, Cell] = {}
    for name, twin in twins(planned).items():
        cells[name] = replace(cells[twin], same_as=twin) if twin else \
            measured(lambda: ours_cell(planned[name], data, judge_outputs, repeat))
    return cells


def print_plans(planned: dict[str, Planned]) -> None:
    """The dry run's lines for one configuration: each plan, and nvcc's figures for its
    CUDA (once per distinct unit)."""
    for (name, p), twin in zip(planned.items(), twins(planned).values()):
        compiled = f"the same CUDA as {twin}" if twin else ptxas_text(p)
        print(f"  {name:<10} {p.describe()}\n      {compiled}")


def dry_run_rows(configs: list, plan_of, headline) -> list[dict]:
    """The dry run of each configuration (a dataclass with a label): headline(cfg), then
    its plans (print_plans); the rows for --json."""
    rows = []
    for cfg in configs:
        planned = plan_of(cfg)
        print(headline(cfg))
        print_plans(planned)
        rows.append({"label": cfg.label, "config": asdict(cfg),
                     "plans": {k: p.summary() for k, p in planned.items()}})
    return rows


def no_gpu(rt: Runtimes) -> bool:
    """Nothing here runs a kernel (said on stderr): the caller exits 2."""
    if rt.torch is None and "pycuda" in rt.missing:
        print(f"nothing here runs a GPU kernel ({rt.missing['pycuda']}; "
              f"{rt.missing['torch']}); --dry-run checks the rest", file=sys.stderr)
        return True
    return False


def time_events(torch, launch, repeat: int) -> float:
    """µs of one launch() by time_cuda's method (codegen.runner.time_launches), with
    torch's events."""
    def events():
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        return start, stop, lambda: start.elapsed_time(stop)
    return time_launches(launch, events, torch.cuda.synchronize, repeat)


# ----------------------------------------------------------------------------- judging

def normal_fp16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values on the fp16 grid (the examples' torch.randn(...).half())."""
    return DTYPES["float16"].quantize(rng.standard_normal(shape, np.float32)).astype(np.float16)


def judge(got, exact: np.ndarray, bound: np.ndarray, name: str) -> tuple[float, str | None]:
    """(the largest |got - exact| / bound, None or why got is wrong), elementwise with
    interp.accept.within_bound (NaN where exact is finite is outside)."""
    got = np.asarray(got, dtype=np.float64).reshape(exact.shape)
    ok = within_bound(got, exact, bound)
    with np.errstate(invalid="ignore"):
        worst = float(np.nanmax(np.abs(got - exact) / bound, initial=0.0))
    if ok.all():
        return worst, None
    bad = np.flatnonzero(~ok)
    at = np.unravel_index(int(bad[0]), exact.shape)
    noun = "rows" if exact.ndim == 1 else "elements"
    return worst, (f"{bad.size} of {ok.size} {noun} outside the bound: {name}"
                   f"[{', '.join(map(str, at))}] = {got[at]:.6g}, reference "
                   f"{exact[at]:.6g}, bound {bound[at]:.3g}")


@dataclass
class Reference:
    exact: np.ndarray              # A @ B in float64 (B a vector or a matrix)
    magnitude: np.ndarray          # |A| @ |B|
    terms: int                     # K, the length of each sum

    @classmethod
    def of(cls, a: np.ndarray, b: np.ndarray) -> Reference:
        b64 = b.astype(np.float64)
        exact = np.empty((a.shape[0], *b.shape[1:]))
        magnitude = np.empty_like(exact)
        rows = max(1, (1 << 24) // a.shape[1])          # 128 MiB of float64 at a time
        for i in range(0, a.shape[0], rows):
            block = a[i:i + rows].astype(np.float64)
            exact[i:i + rows] = block @ b64
            magnitude[i:i + rows] = np.abs(block) @ np.abs(b64)
        return cls(exact, magnitude, a.shape[1])

    def bound(self, out_unit: float = 0.0) -> np.ndarray:
        """Products of two fp16 or bf16 values are exact in fp32: only the fp32 additions
        err. Their worst case (K * 2^-24 * sum|a b|, any order) would hide a dropped
        tile, so this is Higham & Mary's probabilistic bound, lambda sqrt(K) 2^-24
        sum|a b| with lambda = 10 (exceeded with probability < 2K e^-49 per element),
        plus the rounding of the output to its dtype (out_unit: its unit roundoff) and
        an underflow allowance. Tensor cores round their fp32 sums toward zero, one
        rounding per mma of 16 products: a bias of at most K/16 * 2^-23 * |partial
        sum|, far inside lambda sqrt(K) 2^-24 sum|a b| at the K of these benchmarks."""
        sums = 10.0 * np.sqrt(self.terms) * 2.0 ** -24 * self.magnitude
        return sums + out_unit * (np.abs(self.exact) + sums) + 2.0 ** -24

    def judge(self, got, out_unit: float = 0.0, name: str = "y") -> tuple[float, str | None]:
        return judge(got, self.exact, self.bound(out_unit), name)


# ----------------------------------------------------------------------------- the report

class Table:
    """A benchmark's rows, printed as they are measured: each cell `µs rate` or `n/a [n]`
    / `WRONG[n]` with its footnote under the table; the JSON document (every number)
    rewritten after every row so that a run cut short keeps what it measured."""

    def __init__(self, json_path: str | None, environment: dict, columns: tuple[str, ...],
                 ratios: tuple[str, ...], unit: str, width: int = 20, digits: int = 1):
        self.json_path, self.columns, self.ratios, self.unit = json_path, columns, ratios, unit
        self.width, self.digits, self.rows, self.wrong = width, digits, [], 0
        self.notes: dict[str, list[str]] = {}    # a failure's text -> where it happened
        self.doc = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M"),
                    "environment": environment}
        self.started = time.monotonic()

    def header(self, title: str, label_width: int, corner: str = "") -> None:
        self.label_width = label_width
        print(f"\n== {title}   (µs {self.unit})")
        print(f"{corner:<{label_width}}" + "".join(f"{c:<{self.width}}" for c in self.columns)
              + "".join(f"{r:>12}" for r in self.ratios), flush=True)

    def cell_text(self, label: str, column: str, cell: Cell, amount: float) -> str:
        def note(text):    # one footnote per distinct text, naming every place
            self.notes.setdefault(text, []).append(f"{label} {column}")
            return f"[{list(self.notes).index(text) + 1}]"
        if not cell.us:
            return f"n/a {note(cell.reason or 'not measured')}"
        self.wrong += bool(cell.wrong) and not cell.same_as     # counted once
        wrong = f" WRONG{note('WRONG: ' + cell.wrong)}" if cell.wrong else ""
        twin = f" ={cell.same_as}" if cell.same_as else ""
        return f"{cell.us:.1f} {cell.rate(amount):.{self.digits}f}{wrong}{twin}"

    def row(self, label: str, cells: dict[str, Cell], amount: float, ratios: dict,
            extra: dict, shown: str | None = None) -> None:
        """One row: label names it in the footnotes and the JSON, shown (default label)
        starts its printed line."""
        texts = [self.cell_text(label, c, cells[c], amount) for c in self.columns]
        print(f"{shown or label:<{self.label_width}}" + "".join(f"{t:<{self.width}}" for t in texts)
              + "".join(f"{'n/a' if v is None else f'{v:.2f}':>12}"
                        for v in ratios.values()), flush=True)
        self.rows.append({"label": label, "amount": amount, "ratios": ratios, **extra,
                          "elapsed_s": round(time.monotonic() - self.started, 1),
                          **{c: cells[c].summary(amount, self.unit_key) for c in cells}})
        self.write()

    @property
    def unit_key(self) -> str:
        """The rate's key in the JSON."""
        return {"TB/s": "tbps", "TFLOP/s": "tflops"}[self.unit]

    @property
    def failures(self) -> list[str]:
        return [f"[{n}] {text} (at {'; '.join(where[:6])}"
                f"{f'; and {len(where) - 6} more' if len(where) > 6 else ''})"
                for n, (text, where) in enumerate(self.notes.items(), 1)]

    def finish(self, targets: list[dict], issue: str) -> int:
        """Print the failures and the targets; the exit status (1: a WRONG result)."""
        print("\nfailures and reasons:" if self.notes else "\nno failures")
        print("\n".join(f"  {line}" for line in self.failures))
        if self.wrong:
            print(f"\n!!! {self.wrong} WRONG RESULT(S): see the failures above !!!")
        self.doc["targets"] = targets
        print(f"\ntargets ({issue}):")
        for t in targets:
            print(f"  {t['status']:<4} {t['target']}: {t['detail']}")
        self.doc["wall_s"] = round(time.monotonic() - self.started, 1)
        print(f"\n{self.doc['wall_s']} s since the table started (inputs, references, "
              f"compiles and timing; each row's elapsed_s in the JSON)")
        self.write()
        return 1 if self.wrong else 0

    def write(self) -> None:
        if self.json_path:
            self.doc.update(rows=self.rows, failures=self.failures)
            Path(self.json_path).write_text(json.dumps(self.doc, indent=1))


def verdict(name: str, cases: list, threshold: float, at_least: bool) -> dict:
    """Each case (where, value, ours has no usable number there). FAIL when a case misses
    the threshold or ours has no usable number there; PASS when every measured case
    meets it; n/a when nothing could be measured."""
    values = [(v, where) for where, v, _ in cases if v is not None]
    ours_missing = [where for where, _, missing in cases if missing]
    worst = (min if at_least else max)(values, default=None)
    missed = worst is not None and (worst[0] < threshold if at_least else worst[0] > threshold)
    status = "FAIL" if ours_missing or missed else "PASS" if values else "n/a"
    # three decimals: a worst case of 0.948 against 0.95 must not read "worst 0.95 FAIL"
    detail = f"worst {worst[0]:.3f} at {worst[1]}" if worst else "nothing measurable"
    if ours_missing:
        detail += f"; ours has no usable number at {', '.join(ours_missing)}"
    unmeasured = len(cases) - len(values) - len(ours_missing)
    if unmeasured:
        detail += f"; {unmeasured} of {len(cases)} cases not measurable"
    return {"target": name, "status": status, "detail": detail,
            "worst": worst[0] if worst else None}


def best_ratios(cells: dict[str, Cell], against: dict[str, str]) -> dict:
    """{name: the other column's time / the better of our plans' time} (throughput
    ratios) for each name -> column of against, and canon/fast (canonical time / fast
    time); None where either side has no usable number."""
    def us(col):
        return cells[col].us if cells[col].usable else None
    best = min((us(p) for p in OURS if us(p)), default=None)
    out = {name: us(col) / best if us(col) and best else None for name, col in against.items()}
    fast, can = us("fast"), us("canonical")
    return {**out, "canon/fast": can / fast if can and fast else None}


def open_table(json_path: str | None, repeat: int, columns: tuple[str, ...],
               ratios: tuple[str, ...], unit: str, environment: dict,
               width: int = 20) -> tuple[Runtimes, Table] | None:
    """torch and TileLang's default plan (column "tilelang") found, and a Table whose
    JSON records them; None where nothing here runs a kernel (said on stderr)."""
    rt = discover_runtimes({"tilelang": {}})
    if no_gpu(rt):
        return None
    return rt, Table(json_path, {**rt.environment, "repeat": repeat, **environment,
                                 **{f"missing {k}": v for k, v in rt.missing.items()}},
                     columns, ratios, unit, width)


# ----------------------------------------------------------------------------- command line

def add_run_arguments(parser: argparse.ArgumentParser, repeat: int) -> None:
    parser.add_argument("--repeat", type=int, default=repeat, help="timed launches (median)")
    parser.add_argument("--json", metavar="FILE", help="every number, as JSON")
    parser.add_argument("--dry-run", action="store_true",
                        help="parse, plan, render and compile only (no GPU)")


def run(parser: argparse.ArgumentParser, args, configs: list, measure, dry_run,
        **doc) -> int:
    """Every configuration checked (`cfg.check()`: None or why it does not fit; a usage
    error, exit 2), then measure(configs, repeat, json) -> exit status, or the dry run
    (its rows, with doc, into --json)."""
    if not configs or args.repeat < 1:
        parser.error("need at least one configuration and --repeat >= 1")
    for cfg in configs:
        if cfg.check():
            parser.error(cfg.check())
    if not args.dry_run:
        return measure(configs, args.repeat, args.json)
    rows = dry_run(configs)
    if args.json:
        Path(args.json).write_text(json.dumps({"dry_run": True, **doc, "rows": rows},
                                              indent=1))
    return 0

