"""A process that checks many programs stays flat: nothing the checks build is kept
past its own program (issue 26). Every cache left in the tree is either owned by the
object it serves (a plan's simulator statics die with the plan, interp.sim_statics; the
fast search's proofs live on the layouts and in the plan, codegen.proofs.fast) or
bounded and keyed by value (interp.registers.tables, interp.collective's step
geometry), so checking one file again and again must not raise the peak.

The count: CHECKS after WARM_UP, in a fresh interpreter (VmHWM is the process's own peak;
a forked child's ru_maxrss would carry the parent's, and pytest's own peak would hide
any growth). One check of minimal_rfc.py costs about 0.15 s, so 1000 would take minutes
on CI; 100 suffice because a cache keyed by identity grows with every check while one
keyed by value stops growing at the first: before the fix the registers' and the
search's caches grew this file's peak by 0.12-0.25 MB per check, 12 MB or more over 100,
and now it moves by well under one MB. VERIFY_MEMORY_CHECKS=1000 runs the full count."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "examples" / "minimal_rfc.py"
WARM_UP = 8
CHECKS = int(os.environ.get("VERIFY_MEMORY_CHECKS", "100"))
ALLOWED_GROWTH_KB = 3 * 1024

SCRIPT = """
import json, sys
from verify_reducer.verify.oracle import pipeline

def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

path, warm_up, checks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
verdicts = set()
for _ in range(warm_up):
    verdicts.add(pipeline.check(path).verdict)
warm = peak_kb()
for _ in range(checks):
    verdicts.add(pipeline.check(path).verdict)
print(json.dumps({"warm": warm, "end": peak_kb(), "verdicts": sorted(verdicts)}))
"""


def test_peak_memory_stays_flat_over_many_checks_of_one_file():
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(PROGRAM), str(WARM_UP),
                           str(CHECKS)], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["verdicts"] == ["verified"]
    growth = found["end"] - found["warm"]
    assert growth <= ALLOWED_GROWTH_KB, (
        f"the peak grew by {growth} kB over {CHECKS} checks of {PROGRAM.name} after "
        f"{WARM_UP} to warm up ({found['warm']} kB -> {found['end']} kB): something "
        f"keeps every program it checked")
