"""How fast the command answers, as a new user meets it: each command line in a fresh
process (cold: nothing imported yet), side by side with a bare Python start-up on the
same machine in the same run, so the ratio to Python itself is what the tool adds.

    python benchmarks/cli_latency.py [--repeat N] [--quick]

Rows: `python -c pass` (the floor), `verify-reducer --version`, `--help`, `check
--help`, and `check -q` of every program in examples/ (median and maximum over the
examples, each the best of --repeat runs). Targets (issue 29): `--version` under 0.15 s
and `check` of the examples under 0.5 s median, on 2 cores. --quick: one run each and
three examples, for CI (a smoke of the commands; its numbers are noisier)."""
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


def best(argv: list[str], repeat: int) -> float:
    """The best wall time of argv over repeat fresh processes (exit 0 required)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
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
    checks = [best(ENTRY + ["check", "-q", str(p)], repeat) for p in examples]
    rows.append(("check (median)", statistics.median(checks)))
    rows.append(("check (max)", max(checks)))
    print(f"{'command':<18} {'wall s':>8} {'× python':>9}  target")
    for name, took in rows:
        target = TARGETS.get(name)
        verdict = "" if target is None else \
            f"< {target} s: {'met' if took < target else 'NOT met'}"
        print(f"{name:<18} {took:8.3f} {took / floor:9.1f}  {verdict}")
    print(f"({len(examples)} examples, best of {repeat} each, {sys.executable})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
