"""Run mangled programs (verify.fuzzing.mangle) through `verify-reducer check --json` and sort
what went wrong into crash classes, each with a minimized reproducer.

Each program runs in its own child, forked from this process after the tool is imported
(so a child pays no start-up, and a crash, a leak or a changed recursion limit in one
program cannot touch the next). The child calls the CLI's `main(["check", PATH,
"--json"])` — the exact code path of the command — with stdout captured; the parent
keeps up to `jobs` children running, kills one that passes its time limit, and reads
each child's peak RSS from wait4. A child may map `memory_mb` beyond what it inherited,
so a program that asks for 2**40 elements fails inside the tool (MemoryError: an
internal error) instead of taking the machine down.

A run is a *failure* when the tool exits 4 (its internal-error report: the class is the
exception type and the innermost frame of our code), dies from a signal, or passes the
time limit. Exits 0–3 are answers (verified, rejected, usage error, mismatch)."""
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

from verify_reducer.verify.cli.commands import main as cli_main
from verify_reducer.verify.oracle.pipeline import EXIT_INTERNAL

OVER_TIME = "over the time limit"
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


@dataclass
class Outcome:
    exit_code: int | None          # None: killed at the time limit, or died by a signal
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float = 0.0       # user + system time of the child (load-independent)
    crash: str | None = None       # the crash class of a failure; None for an answer
    detail: str = ""               # the exception message, or the traceback's tail

    @property
    def failed(self) -> bool:
        return self.crash is not None


# ----------------------------------------------------------------------------- one child

def _child(source: bytes, workdir: str, result_path: str, memory_mb: int) -> None:
    """Runs in the forked child: check the program as the CLI does and write what
    happened to result_path as JSON."""
    if memory_mb:
        # on top of what the child already maps (it is a copy of a parent that may
        # have grown, e.g. pytest late in a run)
        limit = _mapped_bytes() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    path = os.path.join(workdir, f"prog_{os.getpid()}.py")
    with open(path, "wb") as f:
        f.write(source)
    out = io.StringIO()
    result: dict = {}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            result["exit_code"] = cli_main(["check", path, "--json"])
    except BaseException as exc:  # what escaped the CLI's own net is a failure too
        result["exit_code"] = None
        result["crash"] = f"uncaught {type(exc).__name__}"
        result["detail"] = str(exc)[:300]
    if result.get("exit_code") == EXIT_INTERNAL:
        result["crash"], result["detail"] = _classify_report(out.getvalue())
    with open(result_path, "w") as f:
        json.dump(result, f)


def _mapped_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _classify_report(stdout: str) -> tuple[str, str]:
    """The crash class of an exit-4 report: the exception type and the innermost frame
    in our own code (the crash file's traceback; the file is removed once read)."""
    m = re.search(r'"crash_report":\s*"([^"]+)"', stdout)
    if not m or not os.path.exists(m.group(1)):
        return "exit 4 without a crash report", stdout[-300:]
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


def _reap(status: int, rusage, seconds: float, result_path: str, killed: bool) -> Outcome:
    rss = rusage.ru_maxrss / 1024.0          # Linux reports kilobytes
    cpu = rusage.ru_utime + rusage.ru_stime
    if killed:
        return Outcome(None, seconds, rss, cpu, OVER_TIME)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return Outcome(None, seconds, rss, cpu,
                       f"died from signal {signal.Signals(sig).name}")
    try:
        with open(result_path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        return Outcome(None, seconds, rss, cpu, f"child exited {os.WEXITSTATUS(status)} "
                       f"without a result")
    return Outcome(result["exit_code"], seconds, rss, cpu, result.get("crash"),
                   result.get("detail", ""))


# ----------------------------------------------------------------------------- the pool

def run_programs(sources: list[bytes], jobs: int = 2, time_limit: float = 20.0,
                 memory_mb: int = 4096, on_outcome=None) -> list[Outcome]:
    """Check every source in its own child, `jobs` at a time; identical sources are
    checked once (the check reads nothing but the bytes). on_outcome(index, outcome)
    is called as each distinct source finishes (progress reports)."""
    first: dict[bytes, int] = {}
    for i, source in enumerate(sources):
        first.setdefault(source, i)
    distinct = list(first.values())
    done: dict[int, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="mangle-") as workdir:
        running: dict[int, tuple[int, float, str]] = {}    # pid -> (index, start, result)
        killed: set[int] = set()
        queue = iter(distinct)
        next_index = next(queue, None)
        while running or next_index is not None:
            while next_index is not None and len(running) < jobs:
                result_path = os.path.join(workdir, f"result_{next_index}.json")
                pid = _fork(sources[next_index], workdir, result_path, memory_mb)
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
            done[index] = _reap(status, rusage, time.monotonic() - start, result_path,
                                pid in killed)
            killed.discard(pid)
            if on_outcome is not None:
                on_outcome(index, done[index])
    return [done[first[source]] for source in sources]


def _wait_any(running) -> tuple[int, int, object]:
    """The first of our children that has exited, or (0, 0, None): only our own pids
    are waited for, so a caller's other children are left alone."""
    for child in running:
        pid, status, rusage = os.wait4(child, os.WNOHANG)
        if pid:
            return pid, status, rusage
    return 0, 0, None


def _fork(source: bytes, workdir: str, result_path: str, memory_mb: int) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _child(source, workdir, result_path, memory_mb)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return pid


def run_one(source: bytes, time_limit: float = 20.0, memory_mb: int = 4096) -> Outcome:
    return run_programs([source], 1, time_limit, memory_mb)[0]


# ----------------------------------------------------------------------------- shrinking

def minimize(source: bytes, crash: str, time_limit: float = 20.0, memory_mb: int = 4096,
             max_runs: int = 200) -> bytes:
    """A smaller program that still fails with the same crash class: delta debugging
    over lines (drop chunks, halving the chunk size), then over the bytes of what is
    left. Stops after max_runs checks, keeping the smallest failing program found."""
    runs = 0

    def still_fails(candidate: bytes) -> bool:
        nonlocal runs
        runs += 1
        return run_one(candidate, time_limit, memory_mb).crash == crash

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

    text = b"".join(shrink(source.splitlines(keepends=True)))
    return b"".join(shrink([text[i:i + 1] for i in range(len(text))]))


@dataclass
class CrashClass:
    name: str
    count: int
    first: int                      # index of the first program that showed it
    detail: str
    reproducer: bytes = b""


@dataclass
class Summary:
    total: int
    exit_codes: Counter = field(default_factory=Counter)
    over_time: int = 0
    slow: int = 0                   # runs over the slow threshold (still answered)
    max_rss_mb: float = 0.0
    max_seconds: float = 0.0
    cpu_seconds: float = 0.0        # all children together
    mismatches: list[int] = field(default_factory=list)   # exit 3: answers worth a look
    classes: dict[str, CrashClass] = field(default_factory=dict)


def summarize(outcomes: list[Outcome], slow_seconds: float = 20.0) -> Summary:
    summary = Summary(len(outcomes))
    for i, o in enumerate(outcomes):
        summary.exit_codes["killed" if o.exit_code is None else o.exit_code] += 1
        summary.over_time += o.crash == OVER_TIME
        summary.slow += o.seconds > slow_seconds
        summary.max_rss_mb = max(summary.max_rss_mb, o.peak_rss_mb)
        summary.max_seconds = max(summary.max_seconds, o.seconds)
        summary.cpu_seconds += o.cpu_seconds
        if o.exit_code == 3:
            summary.mismatches.append(i)
        if o.failed:
            cls = summary.classes.setdefault(o.crash, CrashClass(o.crash, 0, i, o.detail))
            cls.count += 1
    return summary


def minimize_classes(summary: Summary, sources: list[bytes], time_limit: float,
                     memory_mb: int = 4096, max_runs: int = 200) -> None:
    """Fill in each class's reproducer. Programs that only ran out of time are kept as
    they are: every shrinking step of a hang costs the whole time limit."""
    for cls in summary.classes.values():
        source = sources[cls.first]
        cls.reproducer = source if cls.name == OVER_TIME else \
            minimize(source, cls.name, time_limit, memory_mb, max_runs)


def format_summary(summary: Summary, slow_seconds: float = 20.0) -> str:
    codes = ", ".join(f"exit {k}: {v}" for k, v in sorted(summary.exit_codes.items(),
                                                          key=lambda kv: str(kv[0])))
    lines = [f"{summary.total} programs: {codes}",
             f"over the time limit: {summary.over_time}; over {slow_seconds:g} s: "
             f"{summary.slow}; slowest {summary.max_seconds:.1f} s; max peak RSS "
             f"{summary.max_rss_mb:.0f} MB; CPU time {summary.cpu_seconds:.0f} s in all",
             f"crash classes: {len(summary.classes)}"]
    if summary.mismatches:
        lines.insert(2, "mismatches (exit 3, not failures; each one deserves a look): " +
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
