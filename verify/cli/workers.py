"""`check --jobs N`: the programs of one command line checked in N worker processes,
each program's output and documents handed back whole and printed in the order the
programs were named, as one process would have printed them.

A worker runs the command exactly as the sequential loop does (verify.cli.batch.guarded,
the same exit-code contract) with its standard streams captured; its Output keeps the
parent's decisions (colour, -q/-v, --json), so the bytes are the ones one process would
have written. Workers are forked from the parent, which has imported everything already,
so a worker starts without paying the imports again."""
from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator


@dataclass
class Judged:
    """One program's result in a worker: its exit code, quiet mode's detail, what it
    printed on each stream, its JSON documents and its HTML report section."""
    code: int
    detail: str = ""
    stdout: str = ""
    stderr: str = ""
    documents: list | None = None
    html_sections: list = field(default_factory=list)


def job_count(args) -> int:
    """--jobs N (0: every core this process may use)."""
    jobs = getattr(args, "jobs", 1) or 0
    if jobs > 0:
        return jobs
    # the cores this process may use (Linux), else the machine's
    usable = getattr(os, "sched_getaffinity", None)
    return len(usable(0)) if usable is not None else (os.cpu_count() or 1)


def judge_in_workers(pargs_of: Callable[[object], argparse.Namespace],
                     command: Callable, programs: list, jobs: int) -> Iterator[Judged]:
    """Judged for each program, in order, computed by `jobs` forked workers."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = [pool.submit(judge_one, pargs_of(p), command) for p in programs]
        try:
            for future in futures:
                yield future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def judge_one(pargs: argparse.Namespace, command: Callable) -> Judged:
    """command(pargs) in this worker, its streams and documents captured."""
    from verify_reducer.verify.cli.batch import guarded, report_usage
    out, err = io.StringIO(), io.StringIO()
    if pargs.ui.json:
        pargs.ui.documents = []
    if getattr(pargs, "html_sections", None) is not None:
        pargs.html_sections = []
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = report_usage(pargs, pargs.problem) if pargs.problem else \
            guarded(pargs, command)
    return Judged(code, pargs.detail, out.getvalue(), err.getvalue(), pargs.ui.documents,
                  getattr(pargs, "html_sections", None) or [])
