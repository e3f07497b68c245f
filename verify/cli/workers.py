"""`check --jobs N`: the programs of one command line checked by N processes (this one
and N - 1 forked workers), each program's answer recorded whole (verify.cli.judged) and
played in the order the programs were named, as one process would have printed them. A
worker that ends without answering (killed, out of memory) costs the programs it took
an internal error each (exit 4), never a hang; the others keep their answers.

A worker runs the command exactly as the sequential loop does (verify.cli.batch
.judge_captured: guarded, the same exit-code contract, its standard streams recorded);
its Output keeps the parent's decisions (colour, -q/-v, --json), so the bytes are the
ones one process would have written. Workers are forked from the parent, which has
imported everything already, so a worker starts without paying the imports again.

Who judges what: programs that look alike (verify.cli.affinity) share a process, since
a process shares its proofs only with itself; each process takes its share from the
board (verify.cli.board) and, when it has none left, takes from the end of another's,
so the processes end together. The workers are plain os.fork children with a pipe each
(verify.cli.channel) and the board's file: multiprocessing's Value, Queue and Process
cost --jobs 2 about 0.02 s of start-up that --jobs 1 does not pay (docs/performance.md)."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import TYPE_CHECKING, Callable, Iterator

from verify_reducer.verify.cli.judged import Judged

if TYPE_CHECKING:                    # imported by judge_in_workers: --jobs 1 loads none
    from verify_reducer.verify.cli.board import Board


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
    workers. The parent judges too (on two cores, --jobs 2 is two judges rather than two
    judges and a parent that only waits) and, between its programs, plays the answers
    that are complete in order."""
    from verify_reducer.verify.cli import affinity, batch
    from verify_reducer.verify.cli.board import Board
    from verify_reducer.verify.cli.channel import Inbox
    texts = [p.source if p.source is not None else "" if p.problem else
             affinity.read_text(p.label) for p in programs]
    board = Board(affinity.shares([affinity.signature(t) for t in texts], jobs),
                  len(programs))
    workers = _Workers()
    parent = os.getpid()
    done: dict[int, Judged] = {}
    played = 0
    try:
        inbox = Inbox(workers.start(jobs - 1, lambda me, fd: _work(
            me, fd, parent, board, pargs_of, command, programs)), workers.ended)
        while (index := board.take(0)) is not None:
            done[index] = batch.judge_captured(pargs_of(programs[index]), command)
            inbox.receive(done, wait=False)
            while played in done:
                yield done.pop(played)
                played += 1
        while played < len(programs):
            if played not in done and not inbox.receive(done, wait=True):
                # every worker has ended and this program's answer never came: the
                # worker that took it was killed (or crashed past the command's guard)
                lost = board.taker(played) not in (None, 0)
                done[played] = batch.judge_captured(
                    pargs_of(programs[played]), _Lost(workers.codes()) if lost else command)
            if played in done:                   # else another program's answer came
                yield done.pop(played)
                played += 1
    finally:
        workers.stop()
        board.close()


def _work(me: int, fd: int, parent: int, board: Board, pargs_of, command,
          programs) -> None:
    """A worker's life: judge what the board gives it, send each answer, end. Whatever
    happens it leaves by os._exit — never through the parent's code that forked it (a
    test, the command's own finish) — and an exception ends it with 1, which the parent
    reports for the programs it had taken."""
    code = 0
    try:
        from verify_reducer.verify.cli import batch
        from verify_reducer.verify.cli.channel import Outbox
        outbox = Outbox(fd)
        while (index := board.take(me)) is not None:
            outbox.send((index, batch.judge_captured(pargs_of(programs[index]), command)))
            if os.getppid() != parent:           # the parent is gone: no one to answer
                break
        outbox.close()
    except BaseException:                        # Ctrl-C reaches the parent too
        code = 1
    finally:
        os._exit(code)


class _Workers:
    """The forked workers: their pids, the read ends of their pipes and, once ended,
    their exit codes."""

    def __init__(self):
        self.pids: list[int] = []
        self.ends: list[int] = []
        self.exits: dict[int, int] = {}

    def start(self, count: int, work: Callable[[int, int], None]) -> list[int]:
        """count workers, each running work(its number, its pipe's write end); the read
        ends. Nothing buffered is written twice: the streams are flushed before a fork.
        A fork the system refuses leaves fewer workers: the others take its share."""
        sys.stdout.flush()
        sys.stderr.flush()
        for me in range(1, count + 1):
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                break
            if pid == 0:
                try:
                    for fd in self.ends:
                        os.close(fd)
                    os.close(read_end)
                    work(me, write_end)
                finally:
                    os._exit(1)                    # work leaves by os._exit itself
            os.close(write_end)
            self.pids.append(pid)
            self.ends.append(read_end)
        return self.ends

    def ended(self) -> bool:
        """Every worker has ended (reaped: its exit code known)."""
        for pid in self.pids:
            if pid not in self.exits:
                reaped, status = os.waitpid(pid, os.WNOHANG)
                if reaped:
                    self.exits[pid] = os.waitstatus_to_exitcode(status)
        return len(self.exits) == len(self.pids)

    def codes(self) -> str:
        """The workers' exit codes, once every one has ended (its pipe closed or reaped)."""
        for pid in self.pids:
            if pid not in self.exits:
                self.exits[pid] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        return ", ".join(str(self.exits[pid]) for pid in self.pids)

    def stop(self) -> None:
        """Every worker ended and reaped (one still running is terminated: the parent
        is leaving early — an interrupt, a closed stdout), the pipes closed."""
        for fd in self.ends:
            os.close(fd)
        self.ends = []
        for pid in self.pids:
            if pid not in self.exits:
                reaped, status = os.waitpid(pid, os.WNOHANG)
                if not reaped:
                    os.kill(pid, signal.SIGTERM)
                    reaped, status = os.waitpid(pid, 0)
                self.exits[pid] = os.waitstatus_to_exitcode(status)


class _Lost:
    """The command a program gets whose worker ended without answering: an internal
    error of ours (exit 4, a crash report naming the workers' exit codes), its own
    program's line in the output; the other programs keep their answers."""

    def __init__(self, codes: str):
        self.codes = codes

    def __call__(self, args) -> int:
        raise RuntimeError(f"the --jobs worker that took {args.program} ended without "
                           f"an answer (worker exit codes {self.codes})")
