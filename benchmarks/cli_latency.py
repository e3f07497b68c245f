"""How fast the command answers, as a new user meets it: each command line in a fresh
process (cold: nothing imported yet), side by side with a bare Python start-up on the
same machine in the same run, so the ratio to Python itself is what the tool adds.

    python benchmarks/cli_latency.py [--repeat N] [--quick]

Rows: `python -c pass` (the floor), `verify-reducer --version`, `--help`, `check
--help`, and `check -q` of every program in examples/ (median and maximum over the
examples, each the best of --repeat runs); then `check -q --jobs 1` and `--jobs 2` of
the examples together, and their ratio. Targets (issue 29): `--version` under 0.15 s,
`check` of the examples under 0.5 s median, and `--jobs 2` at least 1.7× faster than
`--jobs 1`, on 2 cores. --quick: one run each and three examples, for CI (a smoke of
the commands; its numbers are noisier)."""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "verify_reducer"]
TARGETS = {"--version": 0.15, "check (median)": 0.5}


def best(argv: list[str], repeat: int, allowed=(0,)) -> float:
    """The best wall time of argv over repeat fresh processes (an exit in allowed
    required)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode not in allowed:
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    examples = sorted((ROOT / "examples").glob("*.py"))[:3 if args.quick else None]
    floor = best([sys.executable, "-c", "pass"], repeat)
    rows = [("python -c pass", floor)]
    for flags in (["--version"], ["--help"], ["check", "--help"]):
        rows.append((" ".join(flags), best(ENTRY + flags, repeat)))
    # examples/refused/ holds rejected programs (exit 1): the top folder's are verified
    checks = [best(ENTRY + ["check", "-q", str(p)], repeat) for p in examples]
    rows.append(("check (median)", statistics.median(checks)))
    rows.append(("check (max)", max(checks)))
    together = [str(p) for p in examples]
    one = best(ENTRY + ["check", "-q", "--jobs", "1", *together], 1 if args.quick else 2)
    two = best(ENTRY + ["check", "-q", "--jobs", "2", *together], 1 if args.quick else 2)
    rows += [("--jobs 1 (all)", one), ("--jobs 2 (all)", two)]
    print(f"{'command':<18} {'wall s':>8} {'× python':>9}  target")
    for name, took in rows:
        target = TARGETS.get(name)
        verdict = "" if target is None else \
            f"< {target} s: {'met' if took < target else 'NOT met'}"
        print(f"{name:<18} {took:8.3f} {took / floor:9.1f}  {verdict}")
    ratio = one / two
    print(f"--jobs 2 is {ratio:.2f}x faster than --jobs 1 (target >= 1.7: "
          f"{'met' if ratio >= 1.7 else 'NOT met'})")
    print(f"({len(examples)} examples, best of {repeat} each, {sys.executable})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
