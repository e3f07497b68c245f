"""`check --jobs N`: the programs of one command line checked in N worker processes,
each program's answer recorded whole (verify.cli.judged) and played in the order the
programs were named, as one process would have printed them.

A worker runs the command exactly as the sequential loop does (verify.cli.batch
.judge_captured: guarded, the same exit-code contract, its standard streams recorded);
its Output keeps the parent's decisions (colour, -q/-v, --json), so the bytes are the
ones one process would have written. Workers are forked from the parent, which has
imported everything already, so a worker starts without paying the imports again."""
from __future__ import annotations

import argparse
import os
from typing import Callable, Iterator

from verify_reducer.verify.cli.judged import Judged


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
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from verify_reducer.verify.cli.batch import judge_captured
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = [pool.submit(judge_captured, pargs_of(p), command) for p in programs]
        try:
            for future in futures:
                yield future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
