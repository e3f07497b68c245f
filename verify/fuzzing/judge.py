"""One generated program checked like `verify-reducer check --blocks all` on the
generator's inputs, plus the generator's own expected result, then (as backends ask)
compiled with nvcc, run on the GPU, or run through TileLang: the verdict is None (all
agree) or an Outcome whose signature (kind, code, stage, backend) groups findings."""
from __future__ import annotations

import os
import tempfile
import traceback

import numpy as np

from verify_reducer.codegen import ptxas
from verify_reducer.codegen.cuda import Unsupported, render as render_cuda
from verify_reducer.codegen.tilelang_backend import TileLangSetup

from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.fuzzing import model, splitk
from verify_reducer.verify.fuzzing.grammar import Kernel
from verify_reducer.verify.fuzzing.outcome import Outcome
from verify_reducer.verify.fuzzing.program import render
from verify_reducer.verify.fuzzing.tilelang_target import judge_tilelang

# a program's inputs and results go in its header when they are this small
INLINE_ELEMENTS = 256
STAGES = {"R1": "frontend", "R2": "verify", "R3": "layout", "R4": "plan", "R5": "simulate",
          "R506": "resources"}


def program_text(k: Kernel | splitk.SplitK, given: dict[str, np.ndarray],
                 want: dict[str, np.ndarray]) -> str:
    """The program file: verdict, and inputs and expected results when they are small
    (a larger program's travel in its .npz sidecar)."""
    header = ["# expect: ok"]
    if sum(v.size for v in (*given.values(), *want.values())) <= INLINE_ELEMENTS:
        header += [f"# input: {name}={_literal(v)}" for name, v in given.items()]
        header += [f"# expect: result {name}={_literal(v)}" for name, v in want.items()]
    source = splitk.render(k) if isinstance(k, splitk.SplitK) else render(k)
    return "\n".join(header) + "\n" + source


def _literal(v: np.ndarray) -> str:
    values = v.astype(np.float64 if v.dtype.kind == "f" else np.int64).tolist()
    return repr(values).replace(" ", "")


def judge(k: Kernel | splitk.SplitK, backends: tuple[str, ...] = ("sim",),
          tilelang: TileLangSetup | None = None) -> Outcome | None:
    """The kernel's finding, or None when every run agrees with the description.
    tilelang: the setup TileLang runs under when backends has "tilelang". A kernel that
    declares a reducer op skips TileLang, which refuses `T.reducer_op` (design §22)."""
    if isinstance(k, Kernel) and any(r.user_op is not None for r in k.reducers):
        backends = tuple(b for b in backends if b != "tilelang")
    given = model.inputs(k)
    want = model.expected(k, given)
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        path = os.path.join(tmp, "case.py")
        with open(path, "w") as f:
            f.write(program_text(k, given, want))
        return judge_file(path, given, want, backends, tilelang)


def judge_file(path: str, given: dict[str, np.ndarray], want: dict[str, np.ndarray],
               backends: tuple[str, ...] = ("sim",),
               tilelang: TileLangSetup | None = None) -> Outcome | None:
    try:
        report = pipeline.check(path, given=given, blocks="all")
        return _verdict(report, want) or \
            (_judge_nvcc(report) if "nvcc" in backends else None) or \
            (_judge_cuda(report, given) if "cuda" in backends else None) or \
            (judge_tilelang(report, given, tilelang) if "tilelang" in backends else None)
    except pipeline.UsageError:
        # a backend that cannot run here (no device, no context: e.g. too many processes
        # under compute-sanitizer; no TileLang) says nothing about the program: the
        # campaign stops
        raise
    except Exception as exc:  # a crash of ours is exactly what fuzzing is for
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{os.path.basename(frame.filename)}:{frame.name}"
        return Outcome("crash", type(exc).__name__, where, "-",
                       f"{type(exc).__name__}: {exc} | " +
                       traceback.format_exc(limit=-3).replace("\n", " | "))


def _verdict(report: pipeline.CheckReport, want: dict[str, np.ndarray]) -> Outcome | None:
    errors = [d for d in report.diagnostics if d.is_error]
    if errors:
        d = errors[0]
        return Outcome("rejected", d.code, STAGES.get(d.code, STAGES.get(d.code[:2], "verify")), "-",
                       "; ".join(f"{e.code}: {e.message}" for e in errors[:3]))
    if report.violations:
        run = next(r for r in report.runs if r.violations)
        d = run.violations[0]
        return Outcome("violation", d.code, "simulate", pipeline.run_label(run),
                       f"{d.code}: {d.message}")
    for label, comps in report.comparisons.items():
        bad = [c for c in comps if not c.ok]
        if bad:
            c = bad[0]
            return Outcome("mismatch", c.name, "backend", label,
                           f"{label}: {c.name}{list(c.first_index)} = {c.got}, expected "
                           f"{c.expected} (bound {c.bound:g})")
    return _against_model(report, want)


def _against_model(report: pipeline.CheckReport, want: dict[str, np.ndarray]) -> Outcome | None:
    """The interpreter against the generator's own expected result (exact: every value
    the generator allows is an integer its dtype holds)."""
    for name, expected in want.items():
        got = np.asarray(report.reference.outputs[name], dtype=np.float64)
        bad = np.argwhere(got != np.asarray(expected, dtype=np.float64))
        if len(bad):
            idx = tuple(int(i) for i in bad[0])
            return Outcome("oracle", name, "interp", "interp",
                           f"interpreter: {name}{list(idx)} = {got[idx]:g}, the "
                           f"generator's description gives {float(expected[idx]):g} "
                           f"({len(bad)} element(s) differ)")
    return None


def _judge_nvcc(report: pipeline.CheckReport) -> Outcome | None:
    """The CUDA of every plan check simulated, compiled as `emit --what cuda` prints it
    (no GPU needed): a plan the renderer cannot lower or nvcc refuses is a finding."""
    for run in report.runs:
        if run.plan is None:
            continue
        label = f"nvcc/{run.plan}"
        plan = pipeline.make_plan(report.loaded, run.plan)
        try:
            unit = render_cuda(plan).translation_unit()
        except Unsupported as exc:
            return Outcome("unsupported", "render", "codegen", label, str(exc))
        try:
            ptxas.compile_figures(unit, plan.resources.target)
        except ptxas.PtxasFailed as exc:
            errors = [line for line in str(exc).splitlines() if "error" in line]
            return Outcome("compile", "nvcc", "codegen", label,
                           " | ".join(errors[:3]) or str(exc)[:500])
    return None


def _judge_cuda(report: pipeline.CheckReport, given: dict[str, np.ndarray]) -> Outcome | None:
    values = report.loaded.inputs(report.seed, given)
    for planner in ("auto", "canonical"):
        run = pipeline.run_backend(report.loaded, "cuda", values, planner)
        for c in pipeline.compare_outputs(run.outputs, report.reference):
            if not c.ok:
                return Outcome("mismatch", c.name, "backend", f"cuda/{planner}",
                               f"cuda/{planner}: {c.name}{list(c.first_index)} = {c.got}, "
                               f"expected {c.expected} (bound {c.bound:g})")
    return None
