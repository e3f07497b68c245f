"""Run campaign programs (verify.fuzzing.mangle, .deep, .planted, .probes) through the
`verify-reducer` commands and sort what went wrong into crash classes, each with a
minimized reproducer.

A *job* is one program through one command (COMMANDS: `check --json`; `run --no-verify
--backend sim`; `emit --what cuda --no-verify`; `compare` of the simulator's outputs on
witness inputs; `check --inputs witness`), or through explicit CLI steps (the probes).
Each job runs in its own child, forked from this process after the tool is imported (so
a child pays no start-up, and a crash, a leak or a changed recursion limit in one job
cannot touch the next). The child calls the CLI's `main(argv)` — the exact code path of
the command — with stdout and stderr captured; the parent keeps up to `jobs` children
running, kills one that passes its time limit, and reads each child's peak RSS from
wait4. A child may map `memory_mb` beyond what it inherited (RLIMIT_AS), so a program
that asks for 2**40 elements fails inside the tool instead of taking the machine down.

A job is a *failure* when a step exits 4 (the internal-error report: the class is the
command, the exception type and the innermost frame of our code), raises past the CLI,
dies from a signal, passes the time limit, or lets a planted payload write its canary
file. A failure whose exception is a MemoryError (or that reports ENOMEM) is also a
*memory kill*: the tool allocated past the cap instead of refusing with an estimate.
Exits 0–3 and 5 (inconclusive) are answers."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from verify_reducer.verify.cli.commands import main as cli_main
from verify_reducer.verify.oracle.pipeline import EXIT_INTERNAL

OVER_TIME = "over the time limit"
EXECUTED = "executed planted code"
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_CRASH_FILE = re.compile(r"(/\S*verify-reducer-crash-[^\s\"]+\.txt)")
_MEMORY = re.compile(r"MemoryError|Cannot allocate memory|ENOMEM|out of memory|bad_alloc",
                     re.IGNORECASE)

# In a command's steps, {prog} is the program's path and {dir} the job's own folder.
# `compare` judges the simulator's outputs (written by its first step) on the witness
# inputs; the folder starts with an empty theirs.npz, so a program the simulator cannot
# run still reaches compare (which then names the missing tensors).
COMMANDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "check": (("check", "{prog}", "--json"),),
    "sim": (("run", "{prog}", "--no-verify", "--backend", "sim", "--json"),),
    "cuda": (("emit", "{prog}", "--what", "cuda", "--no-verify"),),
    "compare": (("run", "{prog}", "--no-verify", "--backend", "sim", "--inputs", "witness",
                 "--output", "{dir}/theirs.npz", "--json"),
                ("compare", "{prog}", "--outputs", "{dir}/theirs.npz", "--json")),
    "witness": (("check", "{prog}", "--inputs", "witness", "--json"),),
}


def _empty_npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer)
    return buffer.getvalue()


COMMAND_FILES: dict[str, tuple[tuple[str, bytes], ...]] = {
    "compare": (("theirs.npz", _empty_npz()),),
}


@dataclass(frozen=True)
class Job:
    """One program through one command. `steps` overrides COMMANDS[command] (the
    probes' own argv); `files` are written beside the program first; a planted program
    names the `canary` file its payload would create."""
    source: bytes
    command: str = "check"
    steps: tuple[tuple[str, ...], ...] | None = None
    files: tuple[tuple[str, bytes], ...] = ()
    canary: str | None = None
    keep_output: bool = False        # return each step's stdout (the probes read JSON)

    def argvs(self) -> tuple[tuple[str, ...], ...]:
        return self.steps if self.steps is not None else COMMANDS[self.command]

    def all_files(self) -> tuple[tuple[str, bytes], ...]:
        return COMMAND_FILES.get(self.command, ()) + self.files if self.steps is None \
            else self.files


@dataclass
class Outcome:
    exit_code: int | None          # None: killed at the time limit, or died by a signal
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float = 0.0       # user + system time of the child (load-independent)
    crash: str | None = None       # the crash class of a failure; None for an answer
    detail: str = ""               # the exception message, or the traceback's tail
    command: str = "check"
    memory: bool = False           # the failure was an allocation past the cap
    steps: list = field(default_factory=list)   # per step: {"exit_code", ["stdout"]}

    @property
    def failed(self) -> bool:
        return self.crash is not None


# ----------------------------------------------------------------------------- one child

def _child(job: Job, workdir: str, result_path: str, memory_mb: int) -> None:
    """Runs in the forked child: the job's steps as the CLI runs them, what happened
    written to result_path as JSON. Every program is judged, never answered from the
    user's check cache (verify.cli.cache): a campaign neither fills it nor skips a
    repeated seed's runs."""
    os.environ["VERIFY_REDUCER_NO_CACHE"] = "1"
    if memory_mb:
        # on top of what the child already maps (it is a copy of a parent that may
        # have grown, e.g. pytest late in a run)
        limit = _mapped_bytes() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    folder = tempfile.mkdtemp(prefix="job-", dir=workdir)
    path = os.path.join(folder, "prog.py")
    with open(path, "wb") as f:
        f.write(job.source)
    for name, data in job.all_files():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    result: dict = {"exit_code": None, "steps": []}
    for template in job.argvs():
        argv = [part.format(prog=path, dir=folder) for part in template]
        step = _run_step(argv)
        result["steps"].append({k: v for k, v in step.items()
                                if k != "stdout" or job.keep_output})
        result["exit_code"] = step["exit_code"]
        if step.get("crash"):
            result["crash"], result["detail"] = step["crash"], step["detail"]
            result["memory"] = step.get("memory", False)
            break
        if job.canary and os.path.exists(job.canary):
            result["crash"] = EXECUTED
            result["detail"] = f"{' '.join(argv[:1])} wrote {job.canary}"
            os.unlink(job.canary)       # the next job starts without it
            break
    with open(result_path, "w") as f:
        json.dump(result, f)


def _run_step(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    step: dict = {"argv": argv[:1] + argv[2:]}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            step["exit_code"] = cli_main(argv)
    except SystemExit as exc:        # argparse's usage errors exit 2 by raising
        step["exit_code"] = exc.code if isinstance(exc.code, int) else None
        if step["exit_code"] is None:
            step.update(crash=f"uncaught SystemExit({exc.code!r})", detail="")
    except BaseException as exc:     # what escaped the CLI's own net is a failure too
        step["exit_code"] = None
        step["crash"] = f"uncaught {type(exc).__name__}"
        step["detail"] = str(exc)[:300]
        step["memory"] = isinstance(exc, MemoryError)
    if step["exit_code"] == EXIT_INTERNAL:
        step["crash"], step["detail"] = _classify_report(out.getvalue() + err.getvalue())
        step["memory"] = bool(_MEMORY.search(step["crash"] + " " + step["detail"]))
    step["stdout"] = out.getvalue()
    return step


def _mapped_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _classify_report(output: str) -> tuple[str, str]:
    """The crash class of an exit-4 report: the exception type and the innermost frame
    in our own code (the crash file's traceback, named in the JSON document or on
    stderr; the file is removed once read)."""
    m = _CRASH_FILE.search(output)
    if not m or not os.path.exists(m.group(1)):
        return "exit 4 without a crash report", output[-300:]
    with open(m.group(1)) as f:
        trace = f.read()
    os.unlink(m.group(1))
    last = [line for line in trace.strip().splitlines() if line and not line.startswith(" ")]
    exc_line = last[-1] if last else "?"
    exc_type = exc_line.split(":", 1)[0].strip()
    ours = [(p, n, fn) for p, n, fn in _FRAME.findall(trace)
            if any(f"/{pkg}/" in p for pkg in _TOP)]
    where = ""
    if ours:
        p, _, fn = ours[-1]
        # the path from our top folder on (verify/cli/commands.py), wherever installed
        parts = p.replace("\\", "/").split("/")
        top = max(i for i, part in enumerate(parts[:-1]) if part in _TOP)
        where = f" in {'/'.join(parts[top:])}:{fn}"
    return f"{exc_type}{where}", exc_line[:300]


_TOP = ("spec", "interp", "codegen", "verify")


def _reap(job: Job, status: int, rusage, seconds: float, result_path: str,
          killed: bool) -> Outcome:
    rss = rusage.ru_maxrss / 1024.0          # Linux reports kilobytes
    cpu = rusage.ru_utime + rusage.ru_stime
    base = dict(seconds=seconds, peak_rss_mb=rss, cpu_seconds=cpu, command=job.command)
    if killed:
        return Outcome(None, crash=OVER_TIME, **base)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return Outcome(None, crash=f"died from signal {signal.Signals(sig).name}", **base)
    try:
        with open(result_path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        return Outcome(None, crash=f"child exited {os.WEXITSTATUS(status)} without a result",
                       **base)
    return Outcome(result["exit_code"], crash=result.get("crash"),
                   detail=result.get("detail", ""), memory=result.get("memory", False),
                   steps=result["steps"], **base)


# ----------------------------------------------------------------------------- the pool

def run_jobs(jobs_list: list[Job], jobs: int = 2, time_limit: float = 20.0,
             memory_mb: int = 4096, on_outcome=None) -> list[Outcome]:
    """Run every job in its own child, `jobs` at a time; identical jobs run once (a
    job reads nothing but what it carries). on_outcome(index, outcome) is called as
    each distinct job finishes (progress reports)."""
    first: dict[Job, int] = {}
    for i, job in enumerate(jobs_list):
        first.setdefault(job, i)
    done: dict[int, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="mangle-") as workdir:
        running: dict[int, tuple[int, float, str]] = {}    # pid -> (index, start, result)
        killed: set[int] = set()
        queue = iter(first.values())
        next_index = next(queue, None)
        while running or next_index is not None:
            while next_index is not None and len(running) < jobs:
                result_path = os.path.join(workdir, f"result_{next_index}.json")
                pid = _fork(jobs_list[next_index], workdir, result_path, memory_mb)
                running[pid] = (next_index, time.monotonic(), result_path)
                next_index = next(queue, None)
            pid, status, rusage = _wait_any(running)
            if pid == 0:
                now = time.monotonic()
                for child, (_, start, _) in running.items():
                    if now - start > time_limit and child not in killed:
                        os.kill(child, signal.SIGKILL)
                        killed.add(child)
                time.sleep(0.002)
                continue
            index, start, result_path = running.pop(pid)
            done[index] = _reap(jobs_list[index], status, rusage, time.monotonic() - start,
                                result_path, pid in killed)
            killed.discard(pid)
            if on_outcome is not None:
                on_outcome(index, done[index])
    return [done[first[job]] for job in jobs_list]


def run_programs(sources: list[bytes], jobs: int = 2, time_limit: float = 20.0,
                 memory_mb: int = 4096, on_outcome=None,
                 command: str = "check") -> list[Outcome]:
    """Every source through one command (default `check --json`)."""
    return run_jobs([Job(s, command) for s in sources], jobs, time_limit, memory_mb,
                    on_outcome)


def _wait_any(running) -> tuple[int, int, object]:
    """The first of our children that has exited, or (0, 0, None): only our own pids
    are waited for, so a caller's other children are left alone."""
    for child in running:
        pid, status, rusage = os.wait4(child, os.WNOHANG)
        if pid:
            return pid, status, rusage
    return 0, 0, None


def _fork(job: Job, workdir: str, result_path: str, memory_mb: int) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _child(job, workdir, result_path, memory_mb)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return pid


def run_one(source: bytes | Job, time_limit: float = 20.0, memory_mb: int = 4096,
            command: str = "check") -> Outcome:
    job = source if isinstance(source, Job) else Job(source, command)
    return run_jobs([job], 1, time_limit, memory_mb)[0]


# ----------------------------------------------------------------------------- shrinking

def minimize(source: bytes | Job, crash: str, time_limit: float = 20.0,
             memory_mb: int = 4096, max_runs: int = 200) -> bytes:
    """A smaller program that still fails with the same crash class under the same
    command: delta debugging over lines (drop chunks, halving the chunk size), then
    over the bytes of what is left. Stops after max_runs runs, keeping the smallest
    failing program found."""
    job = source if isinstance(source, Job) else Job(source)
    runs = 0

    def still_fails(candidate: bytes) -> bool:
        nonlocal runs
        runs += 1
        trial = Job(candidate, job.command, job.steps, job.files, job.canary)
        return run_one(trial, time_limit, memory_mb).crash == crash

    def shrink(parts: list[bytes]) -> list[bytes]:
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and runs < max_runs:
            i, changed = 0, False
            while i < len(parts) and runs < max_runs:
                trial = parts[:i] + parts[i + chunk:]
                if trial and still_fails(b"".join(trial)):
                    parts, changed = trial, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        return parts

    text = b"".join(shrink(job.source.splitlines(keepends=True)))
    return b"".join(shrink([text[i:i + 1] for i in range(len(text))]))


@dataclass
class CrashClass:
    name: str                       # "<command>: <crash>" (the command alone for check)
    crash: str                      # the crash as the runner names it
    count: int
    first: int                      # index of the first job that showed it
    detail: str
    command: str = "check"
    reproducer: bytes = b""


@dataclass
class Summary:
    total: int
    exit_codes: Counter = field(default_factory=Counter)
    by_command: dict[str, Counter] = field(default_factory=dict)   # command -> exit counts
    over_time: int = 0
    slow: int = 0                   # runs over the slow threshold (still answered)
    slow_cpu: int = 0               # of them, over it in CPU time too (not just load)
    slow_runs: list[int] = field(default_factory=list)
    memory_kills: int = 0           # MemoryError / ENOMEM under the address-space cap
    signals: int = 0                # children that died from a signal
    max_rss_mb: float = 0.0
    max_seconds: float = 0.0
    cpu_seconds: float = 0.0        # all children together
    mismatches: list[int] = field(default_factory=list)   # exit 3: answers worth a look
    classes: dict[str, CrashClass] = field(default_factory=dict)


def class_name(outcome: Outcome) -> str:
    return outcome.crash if outcome.command == "check" else \
        f"{outcome.command}: {outcome.crash}"


def summarize(outcomes: list[Outcome], slow_seconds: float = 20.0) -> Summary:
    summary = Summary(len(outcomes))
    for i, o in enumerate(outcomes):
        code = "killed" if o.exit_code is None else o.exit_code
        summary.exit_codes[code] += 1
        summary.by_command.setdefault(o.command, Counter())[code] += 1
        summary.over_time += o.crash == OVER_TIME
        if o.seconds > slow_seconds:
            summary.slow += 1
            summary.slow_runs.append(i)
            summary.slow_cpu += o.cpu_seconds > slow_seconds
        summary.memory_kills += o.memory
        summary.signals += bool(o.crash and o.crash.startswith("died from signal"))
        summary.max_rss_mb = max(summary.max_rss_mb, o.peak_rss_mb)
        summary.max_seconds = max(summary.max_seconds, o.seconds)
        summary.cpu_seconds += o.cpu_seconds
        if o.exit_code == 3:
            summary.mismatches.append(i)
        if o.failed:
            name = class_name(o)
            cls = summary.classes.setdefault(
                name, CrashClass(name, o.crash, 0, i, o.detail, o.command))
            cls.count += 1
    return summary


def minimize_classes(summary: Summary, jobs_list: list[bytes] | list[Job], time_limit: float,
                     memory_mb: int = 4096, max_runs: int = 200) -> None:
    """Fill in each class's reproducer. Jobs that only ran out of time are kept as
    they are: every shrinking step of a hang costs the whole time limit."""
    for cls in summary.classes.values():
        job = jobs_list[cls.first]
        job = job if isinstance(job, Job) else Job(job, cls.command)
        cls.reproducer = job.source if cls.crash == OVER_TIME else \
            minimize(job, cls.crash, time_limit, memory_mb, max_runs)


def format_summary(summary: Summary, slow_seconds: float = 20.0) -> str:
    def codes(counter: Counter) -> str:
        return ", ".join(f"exit {k}: {v}" for k, v in sorted(counter.items(),
                                                             key=lambda kv: str(kv[0])))
    lines = [f"{summary.total} runs: {codes(summary.exit_codes)}"]
    if len(summary.by_command) > 1:
        lines += [f"  {cmd}: {codes(c)}" for cmd, c in summary.by_command.items()]
    lines += [f"over the time limit: {summary.over_time}; over {slow_seconds:g} s: "
              f"{summary.slow} ({summary.slow_cpu} in CPU time too); memory kills: {summary.memory_kills}; died from a signal: "
              f"{summary.signals}; slowest {summary.max_seconds:.1f} s; max peak RSS "
              f"{summary.max_rss_mb:.0f} MB; CPU time {summary.cpu_seconds:.0f} s in all",
              f"crash classes: {len(summary.classes)}"]
    if summary.mismatches:
        lines.insert(-1, "mismatches (exit 3, not failures; each one deserves a look): " +
                     ", ".join(f"#{i}" for i in summary.mismatches[:20]))
    for cls in sorted(summary.classes.values(), key=lambda c: -c.count):
        lines.append(f"- {cls.name}: {cls.count} program(s), first #{cls.first}: "
                     f"{cls.detail}")
        if cls.reproducer:
            shown = cls.reproducer.decode("utf-8", "backslashreplace")
            if len(shown) > 1500:
                shown = shown[:1500] + f"\n... ({len(cls.reproducer)} bytes in all)"
            lines += ["  reproducer:"] + ["    " + l for l in shown.splitlines()]
    return "\n".join(lines)
