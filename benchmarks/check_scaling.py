"""`verify-reducer check` at real problem sizes: the streaming GEMV of
examples/gemv_pipelined.py at TileLang's tiling (BLOCK_M=64, BLOCK_K=256, 256 threads,
fp16 A and x) for M = K = 4096, 16384 and 65536, each check in its own subprocess,
beside `--blocks all` (every block, whole tensors) at 4096 for comparison.

    python benchmarks/check_scaling.py [--sizes 4096 16384 65536] [--all-sizes 4096]

Per run: wall time, the child's CPU time (user + sys: the machine is shared, and CPU
time is what other processes disturb least), its peak RSS (the rusage of that child,
from os.wait4: RUSAGE_CHILDREN's maximum over every child would hide the smaller runs
behind the largest), check's own memory estimate and how many blocks it ran, read from
its report. Then the
static part in this process (parse, epoch verifier, layouts, block independence and
classes, plans and proofs), which must stay under a second whatever the size.
At 65536 A alone is 8 GiB of fp16: a check that materialized it would show here.

    python benchmarks/check_scaling.py --families [sites lets serial grid]

The scaling families of issue 24 (the robustness campaign's deep programs,
verify/fuzzing/deep.py), each at three sizes up to its documented limit
(docs/limits.md): update sites in one loop (the layout search), a chain of Lets (the
frontend, the epoch verifier's contexts), serial trips and blocks (every block, `--blocks
all`: what a check executes when it cannot sample). Per size: wall, CPU and peak RSS of the child, the CPU beyond the
smallest program's (imports and the static part), the cost per unit it implies, and the
measured ratio of that extra CPU beside the ratio of the sizes — near-linear scaling
shows the two ratios alike.

    python benchmarks/check_scaling.py --split-k [4096 16384]

TileLang's split-K GEMM (blocks that meet only through T.atomic_add, sampled by their
contributions): the blocks check ran of the grid, wall and CPU time, peak RSS.

The children run with the package's modules compiled once (a private
PYTHONPYCACHEPREFIX, warmed by an untimed check of examples/minimal_rfc.py), as an
installed package runs, even where the environment sets PYTHONDONTWRITEBYTECODE;
--no-bytecode keeps that setting (every child compiles every module it imports, about
0.25 s of CPU)."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify_reducer.verify.fuzzing import deep  # noqa: E402
from verify_reducer.verify.oracle import blocks, pipeline  # noqa: E402

TILING = {"BLOCK_M": 64, "BLOCK_K": 256, "THREADS": 256}


def gemv_source(m: int, k: int) -> str:
    """The example with its size and tiling constants replaced (nothing else)."""
    values = {"M": m, "K": k, **TILING}
    lines = []
    for line in (ROOT / "examples" / "gemv_pipelined.py").read_text().splitlines():
        name = line.split(" = ")[0]
        lines.append(f"{name} = {values[name]}" if name in values and " = " in line
                     else line)
    return "\n".join(lines) + "\n"


CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def compiled_modules(folder: str) -> None:
    """Children from now on read and write their bytecode under folder; one untimed
    check compiles what a check imports."""
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = folder
    run_child(str(ROOT / "examples" / "minimal_rfc.py"), [])


def run_child(path: str, extra: list[str]) -> dict:
    """One `check` in a child process (the text report, as people run it: `--json` of a
    whole run spells every tensor out), its wall and CPU time and peak RSS. --no-cache:
    every run is judged, never answered from an earlier run's cache (verify.cli.cache)."""
    env = CHILD_ENV
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, "-m", "verify_reducer", "check", path,
                                  "--no-cache", *extra],
                                 stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text = out.read().decode() + err.read().decode()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss * 1024, "code": os.waitstatus_to_exitcode(status),
            "verdict": _field(text, r"^verdict: (\w+)"),
            "blocks": _field(text, r"^  blocks +(all \d+|\d+ of \d+)"),
            "estimate": _field(text, r"memory estimate ([\d.]+ \w+)")}


def _field(text: str, pattern: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    return found.group(1) if found else "?"


def static_seconds(path: str) -> float:
    """Parse, verify, lay out, prove block independence and classify blocks, plan and
    prove: everything before the first block runs."""
    start = time.perf_counter()
    loaded = pipeline.load(path)
    pipeline.static_diagnostics(loaded)
    blocks.select(loaded.func)
    auto = pipeline.make_plan(loaded, "auto")
    pipeline.epoch_reports(auto)
    pipeline.make_plan(loaded, "canonical")
    return time.perf_counter() - start


# family -> (what one unit is, the deep program of n units, the sizes, check's flags)
FAMILIES = {
    "sites": ("update site", deep.update_sites, (100, 300, 1000), ()),
    "lets": ("Let", deep.let_chain, (1000, 5000, 20000), ()),
    "serial": ("serial trip", deep.serial_trips, (2**12, 2**13, 2**14), ()),
    # the blocks meet only through an atomic add, which check samples: every block asked
    "grid": ("block", deep.grid, (2**10, 2**11, 2**12), ("--blocks", "all")),
}


def scaling_families(names: list[str]) -> None:
    """Each family at its sizes, with the extra CPU over a one-unit program."""
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            unit, make, sizes, flags = FAMILIES[name]
            base_path = os.path.join(folder, f"{name}_1.py")
            Path(base_path).write_bytes(make(1).source)
            base = run_child(base_path, list(flags))["cpu"]
            print(f"{name}: per {unit}; one {unit}: {base:.2f}s CPU (imports, static part)")
            print(f"{'n':>8} {'exit':>4} {'wall':>8} {'cpu':>8} {'peak RSS':>12} "
                  f"{'extra cpu':>9} {'per unit':>10} {'size ratio':>10} {'cpu ratio':>9}")
            previous = None
            for n in sizes:
                path = os.path.join(folder, f"{name}_{n}.py")
                Path(path).write_bytes(make(n).source)
                r = run_child(path, list(flags))
                extra = max(r["cpu"] - base, 1e-3)
                ratios = (f"{n / previous[0]:>10.1f} {extra / previous[1]:>9.1f}"
                          if previous else f"{'':>10} {'':>9}")
                print(f"{n:>8} {r['code']:>4} {r['wall']:7.2f}s {r['cpu']:7.2f}s "
                      f"{mib(r['rss']):>12} {extra:8.2f}s {extra / n * 1e6:8.0f}µs {ratios}")
                previous = (n, extra)


SPLIT_K = ROOT / "tests" / "upstream" / "gemm_splitk.py"   # TileLang's, body unchanged


def split_k(sizes: list[int]) -> None:
    """TileLang's split-K GEMM (examples/gemm_splitk, 128×128×32 tiles, split 8) at
    M = N = K = n: blocks meet only through T.atomic_add, so check samples them (issue
    27): the blocks it ran of the grid, and the cost, which follows the sample."""
    print(f"split-K GEMM (tests/upstream/gemm_splitk.py), split 8; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'M=N=K':>7} {'blocks':>18} {'verdict':>9} {'wall':>8} {'cpu':>8} "
          f"{'peak RSS':>12} {'estimate':>12}")
    for n in sizes:
        params = [f"M={n}", f"N={n}", f"K={n}", "block_M=128", "block_N=128",
                  "block_K=32", "split_k=8"]
        r = run_child(str(SPLIT_K), [x for p in params for x in ("--param", p)])
        print(f"{n:>7} {r['blocks']:>18} {r['verdict'][:9]:>9} {r['wall']:7.2f}s "
              f"{r['cpu']:7.2f}s {mib(r['rss']):>12} {r['estimate']:>12}")


def mib(n: float) -> str:
    return f"{n / (1 << 20):8.0f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[4096, 16384, 65536])
    parser.add_argument("--all-sizes", type=int, nargs="*", default=[4096],
                        help="sizes also checked with --blocks all")
    parser.add_argument("--families", nargs="*", choices=sorted(FAMILIES),
                        help="measure these scaling families instead (none named: all)")
    parser.add_argument("--split-k", type=int, nargs="*", metavar="N",
                        help="check TileLang's split-K GEMM at M = N = K = N instead "
                             "(none named: 4096 and 16384)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="children compile every module from source")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verify-reducer-pyc-") as pycache:
        if not args.no_bytecode:
            compiled_modules(pycache)
        return measure(args)


def measure(args) -> int:
    if args.split_k is not None:
        split_k(args.split_k or [4096, 16384])
        return 0
    if args.families is not None:
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        scaling_families(args.families or list(FAMILIES))
        return 0
    cases = [(n, []) for n in args.sizes] + [(n, ["--blocks", "all"]) for n in args.all_sizes]
    print(f"streaming GEMV, fp16, tiling {TILING}; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'M = K':>7} {'blocks':>14} {'verdict':>9} {'wall':>8} {'cpu':>8} "
          f"{'peak RSS':>12} {'estimate':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for n, extra in cases:
            path = os.path.join(folder, f"gemv_{n}.py")
            Path(path).write_text(gemv_source(n, n))
            r = run_child(path, extra)
            print(f"{n:>7} {r['blocks']:>14} {r['verdict'][:9]:>9} {r['wall']:7.2f}s "
                  f"{r['cpu']:7.2f}s {mib(r['rss']):>12} {r['estimate']:>12}")
        print("static part (parse, verify, layouts, independence and classes, plans and "
              "proofs), in this process:")
        for n in args.sizes:
            path = os.path.join(folder, f"gemv_{n}.py")
            Path(path).write_text(gemv_source(n, n))
            print(f"{n:>7} {static_seconds(path):7.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
