"""Issue 24, "estimate before allocating, everywhere": programs at legal sizes that
allocated the whole problem before any estimate, or hung, now answer — verified, or
refused with their code — under a 1.5 GB address-space limit and well within a
generous time. Each runs the CLI in a child process (the memory limit applies to it
alone; its peak RSS is the child's own VmHWM, written at its exit). The deep programs
are the robustness campaign's own (verify/fuzzing/deep.py). Timings are in docs/limits.md, measured with
benchmarks/check_scaling.py; nothing here asserts a speed."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.fuzzing import campaign, deep
from verify_reducer.verify.oracle.cost import estimate

ROOT = Path(__file__).resolve().parent.parent
LIMIT_AS = 1536 << 20          # the child's address space
TIME_LIMIT = 180               # seconds: generous on a shared two-core machine
SMALL_RSS = 1 << 30            # what "stays small" means for one of these runs


def run_cli(tmp_path: Path, source: bytes | str, *argv: str,
            limit_as: int = LIMIT_AS) -> tuple[int, str, int]:
    """(exit code, stdout + stderr, peak RSS in bytes) of `verify-reducer argv PROG`
    in a child limited to limit_as bytes of address space."""
    path = tmp_path / "prog.py"
    path.write_bytes(source if isinstance(source, bytes) else source.encode())

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out_path = tmp_path / "out.txt"
    with open(out_path, "wb") as out:
        peak = tmp_path / "peak.txt"
        child = subprocess.Popen([sys.executable, "-c", _PEAK_RECORDING, str(peak), *argv,
                                  str(path)],
                                 stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
                                 preexec_fn=limit)
        try:
            child.wait(TIME_LIMIT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            pytest.fail(f"{argv} did not answer in {TIME_LIMIT} s")
    text = peak.read_text() if peak.exists() else ""
    kib = [int(line.split()[1]) for line in text.splitlines() if line.startswith("VmHWM:")]
    assert kib, f"the child recorded no peak:\n{out_path.read_text()[-2000:]}"
    return child.returncode, out_path.read_text(), kib[0] * 1024


# The CLI run in the child, which writes its own /proc/self/status at exit: VmHWM is the
# peak of this process image only (a forked child's ru_maxrss, and RUSAGE_CHILDREN, carry
# the pytest process's RSS from before the exec)
_PEAK_RECORDING = """
import atexit, runpy, sys
peak = sys.argv[1]
atexit.register(lambda: open(peak, "w").write(open("/proc/self/status").read()))
sys.argv = ["verify-reducer", *sys.argv[2:]]
runpy.run_module("verify_reducer", run_name="__main__", alter_sys=True)
"""


def _assert_small(rss: int) -> None:
    assert rss < SMALL_RSS, f"peak RSS {rss >> 20} MiB"


# ----------------------------------------------------------------------------- grids

def test_a_grid_of_2_31_minus_1_blocks_is_answered_without_its_blocks(tmp_path):
    # was a 16 GiB arange of the block index in layout inference: exit 4. The blocks
    # meet only through an atomic add: check samples them
    code, out, rss = run_cli(tmp_path, deep.grid(2**31 - 1).source, "check")
    assert code == 0 and "verdict: verified" in out and " of 2147483647: " in out, out
    _assert_small(rss)
    # every block, asked for, is refused by its count before any runs
    code, out, rss = run_cli(tmp_path, deep.grid(2**31 - 1).source, "check", "--blocks",
                             "all")
    assert code == 1 and "error[R102]" in out and "blocks" in out, out
    _assert_small(rss)


@pytest.mark.parametrize("backend", ["interp", "sim"])
def test_run_refuses_a_whole_grid_past_the_block_limit_before_listing_it(tmp_path, backend):
    # was `list(np.ndindex(*grid))` of 2**31 - 1 tuples: MemoryError, exit 4
    code, out, rss = run_cli(tmp_path, deep.grid(2**31 - 1).source, "run",
                             "--backend", backend)
    assert code == 1 and "error[R102]" in out and "every block of the grid" in out, out
    _assert_small(rss)


def test_independent_blocks_of_the_largest_grid_are_sampled(tmp_path):
    source = (ROOT / "tests/programs/limits/grid_max_extent_layouts.py").read_bytes()
    code, out, rss = run_cli(tmp_path, source, "check")
    assert code == 0 and "verdict: verified" in out, out
    _assert_small(rss)


# ----------------------------------------------------------------------------- lanes, cells

@pytest.mark.parametrize("extent", [2**20, 2**26])
def test_a_wide_parallel_loop_on_1024_threads_is_refused_before_it_is_laid_out(tmp_path,
                                                                                extent):
    # 2**26 lanes took 17 s and 2 GB of layouts before the estimate refused it; 2**20
    # lanes following a fragment replicated 128 times timed out at 2 GB
    code, out, rss = run_cli(tmp_path, deep.parallel_extent(extent).source, "check")
    assert code == 1 and "error[R102]" in out, out
    _assert_small(rss)


@pytest.mark.parametrize("elements", [10**6, 10**7])
def test_a_reducer_every_thread_may_hold_whole_is_bounded(tmp_path, elements):
    # 10**7 elements over 128 threads: a 9.5 GiB replicated layout in the planner, exit 4
    code, out, rss = run_cli(tmp_path, deep.reducer_size(elements).source, "check")
    assert code == 1 and "error[R102]" in out and "cells" in out, out
    _assert_small(rss)


# ----------------------------------------------------------------------------- trip counts

def test_a_run_time_trip_count_is_not_a_false_refusal(tmp_path):
    # was "check would need about 128.0 GiB": exit 2 under the default --max-memory
    source = (ROOT / "tests/programs/limits/runtime_trip_count_estimate.py").read_bytes()
    code, out, rss = run_cli(tmp_path, source, "check")
    assert code == 0 and "verdict: verified" in out, out
    _assert_small(rss)


def test_the_estimate_counts_a_run_time_loop_at_the_limit_the_run_enforces():
    source = (ROOT / "tests/programs/limits/runtime_trip_count_estimate.py").read_text()
    func = parse_source(source, "runtime.py").func()
    # one contribution a run of the body, at most 2**14 runs, 24 bytes each: 384 KiB
    assert estimate(func).working < 8 << 20


def test_serial_loops_past_the_limit_are_refused_at_once(tmp_path):
    code, out, _ = run_cli(tmp_path, deep.serial_trips(2**20).source, "check")
    assert code == 1 and "error[R102]" in out, out
    code, out, _ = run_cli(tmp_path, deep.runtime_trips(2**20).source, "check")
    assert code == 1 and "error[R102]" in out, out


# ----------------------------------------------------------------------------- statements

def test_many_update_sites_in_one_loop_are_laid_out(tmp_path):
    # 300 sites took 40 s: a list-membership test in follow_placed, cubic with the search
    code, out, rss = run_cli(tmp_path, deep.update_sites(1000).source, "check")
    assert code == 0 and "verdict: verified" in out, out
    _assert_small(rss)


def test_follow_placed_tries_covering_accesses_first_among_many():
    func = parse_source(deep.update_sites(300).source.decode(), "sites.py").func()
    layouts = infer_layouts(func)
    (loop,) = layouts.loops.values()
    assert loop.describe() == "thread = 8*rep + j, slot = 0, replicate 16 (threads 0..127)"
    assert len(layouts.updates) == 300


def test_membership_by_sorted_keys_is_the_broadcast_comparison():
    # layout_rules compared a loop's and a fragment's holders as a [Ra, Rb, N] broadcast
    # (2**28 booleans for two layouts replicated 128 times); the keyed version must
    # decide exactly the same
    import numpy as np
    from verify_reducer.codegen.layout_rules import _in_columns
    rng = np.random.default_rng(1)
    for _ in range(300):
        ra, rb, n = rng.integers(1, 6), rng.integers(0, 6), rng.integers(0, 30)
        a, b = rng.integers(0, 40, (ra, n)), rng.integers(0, 40, (rb, n))
        want = (a[:, None, :] == b[None, :, :]).any(axis=1)
        assert (_in_columns(a, b) == want).all()


def test_a_chain_of_5000_lets_is_answered(tmp_path):
    # the frontend's fresh names and the epoch verifier's contexts were quadratic
    code, out, rss = run_cli(tmp_path, deep.let_chain(5000).source, "check")
    assert code == 0 and "verdict: verified" in out, out
    _assert_small(rss)


# ----------------------------------------------------------------------------- campaigns

class _Stop(Exception):
    pass


def test_a_campaign_of_10_12_cases_draws_them_as_it_goes(tmp_path):
    # `fuzz --count 10**12` listed every case number before the first ran
    seen = []

    def progress(case, _outcome):
        seen.append(case)
        raise _Stop

    tracemalloc.start()
    try:
        with pytest.raises(_Stop):
            campaign.fuzz(10**12, 0, str(tmp_path / "out"), progress=progress)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == [0]
    assert peak < 64 << 20


# ----------------------------------------------------------------------------- memory limit

def test_the_default_max_memory_follows_the_address_space_limit(tmp_path):
    # under `ulimit -v`, half of the limit, not of physical memory: a run the estimate
    # puts over it is exit 2 with the estimate, never killed halfway
    script = ("from verify_reducer.verify.oracle.cost import physical_memory\n"
              "print(physical_memory())\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=limit,
                          timeout=TIME_LIMIT)
    assert int(done.stdout) == LIMIT_AS
