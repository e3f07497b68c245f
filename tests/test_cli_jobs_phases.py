"""benchmarks/cli_latency.py --phases (issue 29, the --jobs ratio): where one --jobs 1 and
one --jobs 2 run spend their time — the start-up before the first program, each
process's programs, the work both processes did. --quick: two examples."""
from __future__ import annotations

import re
import subprocess
import sys

from test_cli_conventions import ROOT


def test_the_phases_name_every_program_once_and_each_process_of_jobs_2():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cli_latency.py"),
                           "--phases", "--quick"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    startups = [float(m[2]) for line in lines
                if (m := re.match(r"--jobs (\d)  start-up before the first program: "
                                  r"(\d+\.\d{3}); the command: (\d+\.\d{3}) wall", line))]
    assert len(startups) == 2 and all(0 < s < 30 for s in startups), done.stdout
    rows = [re.match(r"\s+(parent|worker)\s+(\d+)\s+(\d+\.\d{3})\s+(\d+\.\d{3})", line)
            for line in lines]
    rows = [(m[1], int(m[2])) for m in rows if m]
    # --jobs 1: the parent judges both; --jobs 2: the parent and its worker share them
    # (the parent is listed even where the worker took both)
    assert rows[0] == ("parent", 2), done.stdout
    assert [r[0] for r in rows[1:]] in (["parent", "worker"], ["parent"]), done.stdout
    assert sum(n for _, n in rows[1:]) == 2, done.stdout
    assert re.search(r"the programs' CPU beyond one process's: [+-]\d+\.\d{3} s", done.stdout)
    assert done.stdout.rstrip().endswith(")") and "(2 examples, one run each" in done.stdout
