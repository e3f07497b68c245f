"""`check --jobs N`: the programs of one command line checked by N processes (this one
and N - 1 forked workers), each program's answer recorded whole (verify.cli.judged) and
played in the order the programs were named, as one process would have printed them. A
worker that ends without answering (killed, out of memory) costs the programs it took
an internal error each (exit 4), never a hang; the others keep their answers.

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
    """Judged for each program, in order, computed by this process and jobs - 1 forked
    workers. Each takes the next program no one has taken (a shared counter), so a long
    program never leaves another process idle with two left; a worker sends its answers
    back through a queue, and the parent plays them in order as they are complete. The
    parent judges too: on two cores, --jobs 2 is two judges rather than two judges and a
    parent that only waits (the pool that did so cost ~0.2 s of a 1.5 s run)."""
    import multiprocessing

    from verify_reducer.verify.cli.batch import judge_captured
    context = multiprocessing.get_context("fork")
    taken = context.Value("i", 0)
    answers = context.Queue()

    def next_index() -> int:
        with taken.get_lock():
            index = taken.value
            taken.value += 1
        return index

    def work() -> None:                          # a worker: judge until none is left
        while (index := next_index()) < len(programs):
            answers.put((index, judge_captured(pargs_of(programs[index]), command)))

    workers = [context.Process(target=work, daemon=True) for _ in range(jobs - 1)]
    for worker in workers:
        worker.start()
    done: dict[int, Judged] = {}
    played = 0
    try:
        while (index := next_index()) < len(programs):
            done[index] = judge_captured(pargs_of(programs[index]), command)
            _receive(answers, done, workers, block=False)
            while played in done:
                yield done.pop(played)
                played += 1
        while played < len(programs):
            if played not in done and not _receive(answers, done, workers, block=True):
                # every worker has ended and this program's answer never came: the
                # worker that took it was killed (or crashed past the command's guard)
                codes = ", ".join(str(w.exitcode) for w in workers)
                done[played] = judge_captured(pargs_of(programs[played]), _Lost(codes))
            if played in done:
                yield done.pop(played)
                played += 1
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()


def _receive(answers, done: dict, workers: list, block: bool) -> bool:
    """Every answer the workers have sent (block: wait for one). False when blocking
    found none and none can come: every worker has ended and the queue is empty."""
    import queue
    while True:
        try:
            index, judged = answers.get(timeout=0.1) if block else answers.get_nowait()
        except queue.Empty:
            if not block:
                return True
            if not any(w.is_alive() for w in workers) and answers.empty():
                return False
            continue
        done[index] = judged
        block = False


class _Lost:
    """The command a program gets whose worker ended without answering: an internal
    error of ours (exit 4, a crash report naming the workers' exit codes), its own
    program's line in the output; the other programs keep their answers."""

    def __init__(self, codes: str):
        self.codes = codes

    def __call__(self, args) -> int:
        raise RuntimeError(f"the --jobs worker that took {args.program} ended without "
                           f"an answer (worker exit codes {self.codes})")
