"""TileLang as a fuzzing target (`fuzz --backend tilelang --tilelang-config KEY=VALUE`).

Each program that `check` accepts, and whose interpreter result is the generator's
expected result, is also run through TileLang under one setup (its version and pass
configs) and compared with the interpreter. A disagreement is a finding of its own
backend, `tilelang/default` or `tilelang/KEY=VALUE,...`, of kind

    mismatch   a wrong output (code: the output's name)
    refused    TileLang raised while building or compiling (code: its message, normalized)
    crashed    TileLang's kernel failed at run time (code: its message, normalized)

and it carries TileLang's outcome, from which the process that ran TileLang builds the
bug report (verify.fuzzing.bugreport) that the campaign saves.

The setup is plain data (codegen.tilelang_backend.TileLangSetup: the version string and
the converted configs) and travels to worker processes and Dask workers as a task
argument. The campaign asks for it in a forked child process: CUDA that a process has
initialized (importing TileLang, asking torch for a device) is unusable in the
processes it forks afterwards, and the campaign's workers are forked from it."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import re

import numpy as np

from verify_reducer.codegen.tilelang_backend import TileLangSetup

from verify_reducer.verify.fuzzing import bugreport

from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.fuzzing.outcome import Outcome

# a line of a traceback (Python's or TVM's), never the message itself
_FRAME = re.compile(r'^\s*(\d+:\s|File "|Traceback|Stack trace|at \S+\(|\[bt\])')
KEY_LENGTH = 100


def prepare_setup(config: dict[str, str] | None = None) -> TileLangSetup:
    """The setup TileLang runs under, with config's pass configs (KEY -> VALUE text);
    UsageError (exit 2) when TileLang cannot run here or refuses a key or value. Asked
    in a forked child so that this process keeps CUDA uninitialized (module doc)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return pipeline.tilelang_setup(config)
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(pipeline.tilelang_setup, dict(config or {})).result()


def backend_label(setup: TileLangSetup) -> str:
    """The finding's backend: `tilelang/default`, or the configs as given on the
    command line (`tilelang/tl.reducer_force_baseline=true`)."""
    if not setup.given:
        return "tilelang/default"
    return "tilelang/" + ",".join(f"{k}={v}" for k, v in sorted(setup.given.items()))


def judge_tilelang(report: pipeline.CheckReport, given: dict[str, np.ndarray],
                   setup: TileLangSetup | None) -> Outcome | None:
    """TileLang's verdict on a program check accepted (report, run with blocks="all",
    whose reference is the interpreter's whole-grid result): None when it agrees."""
    setup = setup if setup is not None else pipeline.tilelang_setup()
    values = report.loaded.inputs(report.seed, given)
    found = bugreport.compare_with_tilelang(report.loaded, values, setup, report.reference)
    if not found.disagrees:
        return None
    backend = backend_label(setup)
    if found.failure is not None:
        return Outcome(found.kind, failure_key(found.failure.detail), found.failure.stage,
                       backend, found.summary(), evidence=found)
    bad = next(c for c in found.comparisons if not c.ok)
    return Outcome("mismatch", bad.name, "backend", backend, found.summary(),
                   evidence=found)


def failure_key(detail: str) -> str:
    """TileLang's message reduced to what stays the same while the minimizer shrinks
    the program: its last line that is not a traceback frame (TVM prints the frames
    first and the check that failed last), numbers as N, cut to KEY_LENGTH."""
    lines = [line.strip() for line in detail.splitlines()
             if line.strip() and not _FRAME.match(line)]
    message = lines[-1] if lines else detail.strip()
    return re.sub(r"\d+", "N", message)[:KEY_LENGTH]


def bug_report(final: Outcome, first: Outcome, origin: str) -> bugreport.BugReport | None:
    """The bug report of a TileLang finding: the minimized program's run (final), with
    the program as generated (first) beside it; None for a finding of ours."""
    if final.evidence is None:
        return None
    return bugreport.build_report(final.evidence, original=first.evidence, origin=origin)
