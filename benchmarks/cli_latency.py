"""How fast the command answers, as a new user meets it: each command line in a fresh
process (nothing imported yet), side by side with a bare Python start-up on the same
machine in the same run, so the ratio to Python itself is what the tool adds. Wall time
and CPU time (user + system of the process) are both shown: on a loaded machine the
wall time waits for a core, the CPU time does not.

    python benchmarks/cli_latency.py [--repeat N] [--quick]

Rows, each the median of --repeat runs (for several examples: the median and the
maximum over the examples of those medians):
- `python -c pass` (the floor), `verify-reducer --version`, `--help`, `check --help`;
- `check -q` of each program in examples/ cold — an empty cache (verify.cli.cache), so
  every proof and run is done and the answer is written — and cached: the same command
  again, answered from the cache;
- `check -q --no-cache --jobs 1` and `--jobs 2` of the examples together, and their
  ratio: the medians of --repeat (at least 3) runs of each, the two alternated (not with
  --quick).
Targets (issue 29): `--version` under 0.15 s, `check` under 0.5 s median cold and under
0.2 s from the cache, `--jobs 2` at least 1.7× faster than `--jobs 1`, on 2 cores.
--quick: one run of each and one example, for the test suite (tests/test_cli_latency.py:
a smoke of the commands; its numbers are noisier). The cache used is a temporary folder
of this run's own, never the user's.

--phases: instead of the table, where the time of one `check -q --no-cache --jobs 1` and
one `--jobs 2` of the examples goes (docs/performance.md, the thirteenth session): the
start-up before the first program (Python, the imports), each process's programs
(their wall and CPU time, first start and last end), and the CPU the programs took
beyond what one process took for them (work both processes did: each process shares
its terms and proofs only with itself). Each program is timed around
verify.cli.batch.judge_captured in the process that judges it; the times are
CLOCK_MONOTONIC's, which every process reads alike.

Python's bytecode: an installed package has its modules compiled (pip compiles them, and
Python writes a checkout's on first import), so the commands run with bytecode, written
once by an untimed warm-up into a folder of this run's own (PYTHONPYCACHEPREFIX), even
where the environment says PYTHONDONTWRITEBYTECODE. --no-bytecode measures instead what
that setting costs: every process compiles every module it imports from source (about
0.25 s of a check's CPU)."""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "verify_reducer"]
TARGETS = {"--version": 0.15, "check cold (median)": 0.5, "check cached (median)": 0.2}


class Took(NamedTuple):
    wall: float
    cpu: float


def timed(argv: list[str], env: dict, allowed=(0,)) -> Took:
    """One fresh process of argv: its wall time and its CPU time (an exit in allowed
    required)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in allowed:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return Took(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def median(runs: list[Took]) -> Took:
    return Took(statistics.median(t.wall for t in runs), statistics.median(t.cpu for t in runs))


def cold_and_cached(program: Path, repeat: int, env: dict) -> tuple[Took, Took]:
    """check -q of program: the median of repeat runs on an empty cache, and of repeat
    runs answered from it."""
    cold, cached = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="verify-reducer-bench-") as folder:
            here = {**env, "VERIFY_REDUCER_CACHE_DIR": folder}
            cold.append(timed(ENTRY + ["check", "-q", str(program)], here))
            cached.append(timed(ENTRY + ["check", "-q", str(program)], here))
    return median(cold), median(cached)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="compile every module from source in every process")
    parser.add_argument("--phases", action="store_true",
                        help="where one --jobs 1 and one --jobs 2 run spend their time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="verify-reducer-pyc-") as pycache:
        return (phases if args.phases else measure)(args, pycache)


def measure(args, pycache: str) -> int:
    repeat = 1 if args.quick else args.repeat
    # examples/refused/ holds rejected programs (exit 1): the top folder's are verified
    examples = sorted((ROOT / "examples").glob("*.py"))[:1 if args.quick else None]
    env = {k: v for k, v in os.environ.items()
           if k not in ("VERIFY_REDUCER_NO_CACHE", "VERIFY_REDUCER_CACHE_DIR",
                        "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if args.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = pycache
        # untimed: compiles what a check, and the commands below, import
        timed(ENTRY + ["check", "-q", "--no-cache", str(examples[0])], env)
    floor = median([timed([sys.executable, "-c", "pass"], env) for _ in range(repeat)])
    rows = [("python -c pass", floor)]
    for flags in (["--version"], ["--help"], ["check", "--help"]):
        rows.append((" ".join(flags), median([timed(ENTRY + flags, env)
                                              for _ in range(repeat)])))
    measured = [cold_and_cached(p, repeat, env) for p in examples]
    for kind, runs in (("cold", [m[0] for m in measured]), ("cached", [m[1] for m in measured])):
        rows.append((f"check {kind} (median)", median(runs)))
        rows.append((f"check {kind} (max)", Took(max(t.wall for t in runs),
                                                 max(t.cpu for t in runs))))
    jobs = {}
    if not args.quick:
        together = ENTRY + ["check", "-q", "--no-cache", *map(str, examples)]
        # alternated, --repeat pairs (at least 3): a second session's load hits both
        pairs = [[timed(together + ["--jobs", str(n)], env) for n in (1, 2)]
                 for _ in range(max(repeat, 3))]
        jobs = {n: median([pair[i] for pair in pairs]) for i, n in enumerate((1, 2))}
        rows += [("--jobs 1 (all)", jobs[1]), ("--jobs 2 (all)", jobs[2])]
    print(f"{'command':<22} {'wall s':>7} {'cpu s':>7} {'× python':>9}  target (wall)")
    for name, took in rows:
        target = TARGETS.get(name)
        verdict = "" if target is None else \
            f"< {target} s: {'met' if took.wall < target else 'NOT met'}"
        print(f"{name:<22} {took.wall:7.3f} {took.cpu:7.3f} {took.wall / floor.wall:9.1f}  "
              f"{verdict}")
    if jobs:
        ratio = jobs[1].wall / jobs[2].wall
        print(f"--jobs 2 is {ratio:.2f}x faster than --jobs 1 (target >= 1.7: "
              f"{'met' if ratio >= 1.7 else 'NOT met'})")
    bytecode = "no bytecode: every module compiled in every process" if args.no_bytecode \
        else "modules compiled once, as installed"
    print(f"({len(examples)} example{'s' * (len(examples) != 1)}, median of {repeat} "
          f"run(s) each, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"{bytecode}, {sys.executable})")
    return 0


# A check run as the command runs it (verify.cli.entry.run's os._exit included), each
# program's judgment timed in the process that judges it: the timer is set on
# verify.cli.batch once the verifier is imported (entry.verifier), so the start-up is
# the command's own.
PROBE = """
import json, os, sys, time
from verify_reducer.verify.cli import entry
imported, log = entry.verifier, sys.argv.pop(1)
def verifier():
    commands = imported()
    from verify_reducer.verify.cli import batch
    judge = batch.judge_captured
    def timed(pargs, command):
        start, cpu = time.perf_counter(), time.thread_time()
        judged = judge(pargs, command)
        with open(log, "a") as f:
            f.write(json.dumps([os.getpid(), start, time.perf_counter(),
                                time.thread_time() - cpu]) + "\\n")
        return judged
    batch.judge_captured = timed
    return commands
entry.verifier = verifier
with open(log, "a") as f:
    f.write(json.dumps(["parent", os.getpid()]) + "\\n")
entry.run()
"""


def phases(args, pycache: str) -> int:
    examples = sorted((ROOT / "examples").glob("*.py"))[:2 if args.quick else None]
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPYCACHEPREFIX"] = pycache
    together = ["check", "-q", "--no-cache", *map(str, examples)]
    timed(ENTRY + together, env)                   # untimed: writes the bytecode
    one_cpu = None
    print(f"{'':9} {'process':8} {'programs':>8} {'judging':>8} {'cpu':>7} "
          f"{'first':>7} {'last':>7}   (s; first/last: a program's start/end)")
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory(prefix="verify-reducer-phases-") as folder:
            log = os.path.join(folder, "programs.jsonl")
            spawned = time.perf_counter()
            took = timed([sys.executable, "-c", PROBE, log, *together, "--jobs", str(jobs)],
                         env)
            with open(log) as f:
                (_, parent), *runs = [json.loads(line) for line in f]
        by_process: dict[int, list] = {parent: []}
        for pid, start, end, cpu in runs:
            by_process.setdefault(pid, []).append((start - spawned, end - spawned, cpu))
        first_start = min(start for done in by_process.values() for start, _, _ in done)
        print(f"--jobs {jobs}  start-up before the first program: {first_start:.3f}; "
              f"the command: {took.wall:.3f} wall, {took.cpu:.3f} cpu")
        for pid, done in by_process.items():
            span = f"{min(s for s, _, _ in done):7.3f} {max(e for _, e, _ in done):7.3f}" \
                if done else ""
            print(f"{'':9} {'parent' if pid == parent else 'worker':8} {len(done):8d} "
                  f"{sum(e - s for s, e, _ in done):8.3f} {sum(c for _, _, c in done):7.3f} "
                  f"{span}")
        cpu = sum(c for _, _, _, c in runs)
        if one_cpu is None:
            one_cpu = cpu
        else:
            print(f"{'':9} the programs' CPU beyond one process's: {cpu - one_cpu:+.3f} s "
                  f"(work done in both)")
    print(f"({len(examples)} examples, one run each, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
