"""GPU time of one kernel under each physical plan, measured side by side in one run:
the streaming GEMV (examples/gemv_pipelined.py) scaled up to a size where memory
bandwidth, not launch overhead, decides. Prints each plan's median kernel time, its
effective bandwidth (bytes of A and x read once), and the ratios canonical/fast and
legacy/fast — docs/design.md §7 wants canonical close to fast.

    python benchmarks/cuda_plans.py [--m 8192] [--k 8192] [--repeat 50]

Needs pycuda and a GPU (on the lent machine: `source .gpu/setup-device.sh` first)."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify_reducer.codegen.plan import plan_func  # noqa: E402
from verify_reducer.codegen.runner import time_cuda  # noqa: E402
from verify_reducer.spec.frontend import parse_source  # noqa: E402
from verify_reducer.verify.oracle.inputs import prepare  # noqa: E402

EXAMPLE = ROOT / "examples" / "gemv_pipelined.py"


def scaled_gemv(m: int, k: int) -> str:
    """The example's source with its problem size replaced (tiles and threads kept)."""
    text = EXAMPLE.read_text()
    text = re.sub(r"^M = \d+$", f"M = {m}", text, flags=re.M)
    return re.sub(r"^K = \d+$", f"K = {k}", text, flags=re.M)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--k", type=int, default=8192)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    func = parse_source(scaled_gemv(args.m, args.k), "gemv_scaled.py").func()
    inputs = prepare(func, seed=0)
    bytes_read = args.m * args.k * 2 + args.k * 2
    times = {}
    for planner in ("fast", "canonical", "legacy"):
        plan = plan_func(func, planner)
        times[planner] = time_cuda(plan, inputs, args.repeat)
        print(f"{planner:<10} {times[planner]:9.1f} us   "
              f"{bytes_read / times[planner] / 1e6:7.3f} TB/s")
    print(f"canonical/fast = {times['canonical'] / times['fast']:.2f}   "
          f"legacy/fast = {times['legacy'] / times['fast']:.2f}   "
          f"(GEMV {args.m}x{args.k} fp16, median of {args.repeat})")


if __name__ == "__main__":
    main()
