"""benchmarks/cli_latency.py --quick, the suite's smoke of the command's start-up (issue
29): every row is measured, a fresh process each, and an answer from the cache costs a
fraction of the cold check's CPU time (the wall-time targets are read from the
benchmark's own table, on a quiet machine: docs/performance.md)."""
from __future__ import annotations

import re
import subprocess
import sys

from test_cli_conventions import ROOT

ROWS = ("python -c pass", "--version", "--help", "check --help", "check cold (median)",
        "check cold (max)", "check cached (median)", "check cached (max)")


def test_the_quick_benchmark_measures_every_row_and_the_cache_pays():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cli_latency.py"),
                           "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    table = {}
    for line in done.stdout.splitlines():
        match = re.match(r"(.+?)\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+\d", line)
        if match:
            table[match[1]] = (float(match[2]), float(match[3]))
    assert tuple(table) == ROWS
    cold_cpu, cached_cpu = table["check cold (median)"][1], table["check cached (median)"][1]
    assert cached_cpu < cold_cpu / 2, done.stdout
    assert "(1 example, median of 1 run(s) each" in done.stdout
