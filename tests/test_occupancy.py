"""The plan's occupancy (codegen.occupancy): the residency rules of the target table, the
cap of a pipelined kernel and the padded launch that enforces it, a kernel without a
pipeline left alone, the cap in the CUDA header, the plan's text and JSON, the runner's
launch, and benchmarks/occupancy_sweep.py's dry run. The H200 figures the tests pin are
those the GPU measured (docs/gpu-runs/2026-12-01-final-main.log)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import gemv_same_source as bench
from benchmarks import occupancy_sweep
from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.occupancy import FEWEST, IN_FLIGHT_PER_SM, in_flight_bytes
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.codegen.runner import launch_arguments
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.target import target

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
SM90 = target("sm_90")


def _plan(path: Path, planner: str = "canonical"):
    return plan_func(parse_file(str(path)).func(), planner)


def _gemv(block_m: int, block_k: int, threads: int, dtype: str = "float16"):
    cfg = bench.Config(65536, 4096, dtype, block_m, block_k, threads)
    return plan_func(parse_source(bench.gemv_source(cfg), "gemv.py").func(), "canonical")


# ----------------------------------------------------------------------------- the table

def test_residency_rules_give_the_counts_the_h200_ran():
    # the GEMV's 66 KB blocks: 3 per SM by shared memory; 80 registers at 256 threads
    # allow 3 as well; 8.4 KB blocks of 128 threads: 16, by threads
    assert SM90.resident_blocks(256, 66560) == 3
    assert SM90.resident_blocks(256, 66560, registers=80) == 3
    assert SM90.resident_blocks(128, 8576) == 16
    assert SM90.resident_blocks(128, 8576, registers=32) == 16
    assert SM90.resident_blocks(1024, 0, registers=128) == 0      # 128 K registers
    # the padding the sweep launched with (115712 bytes for 2, 19584 past 8576 for 8)
    assert SM90.shared_for(2) == 115712 and SM90.shared_for(8) - 8576 == 19584


@pytest.mark.parametrize("cap", range(1, SM90.blocks_per_sm + 1))
def test_shared_for_a_cap_fits_exactly_that_many(cap):
    """A block of shared_for(cap) bytes: cap of them fit an SM, one more does not."""
    shared = SM90.shared_for(cap)
    assert SM90.resident_blocks(32, shared) == cap
    assert shared <= SM90.dynamic_shared_bytes


# ----------------------------------------------------------------------------- the cap

@pytest.mark.parametrize("tiling,cap", [((64, 256, 256), 2), ((128, 128, 256), 2),
                                        ((32, 512, 256), 2), ((16, 1024, 256), 2),
                                        ((32, 64, 128), 8)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pipelined_gemv_is_capped_and_its_launch_enforces_the_cap(tiling, cap, dtype):
    plan = _gemv(*tiling, dtype)
    res = plan.resources
    occ = res.occupancy
    block_m, block_k, threads = tiling
    # two stages of the A tile and of the x tile, 16-bit elements
    assert occ.in_flight_bytes == in_flight_bytes(plan) == 2 * 2 * (block_m * block_k + block_k)
    assert occ.cap == cap == max(FEWEST, -(-IN_FLIGHT_PER_SM // occ.in_flight_bytes))
    assert occ.resident > cap
    source = render(plan)
    assert source.dynamic_shared_bytes == res.launch_shared_bytes == occ.launch_shared_bytes
    assert res.launch_shared_bytes > res.dynamic_shared_bytes         # padding
    assert SM90.resident_blocks(threads, res.static_shared_bytes +
                                source.dynamic_shared_bytes) == cap
    assert source.carveout == 100
    assert f"at most {cap} blocks per SM" in source.source.splitlines()[1]


def test_a_kernel_without_a_pipeline_runs_as_many_blocks_as_fit():
    plan = _plan(ROOT / "examples" / "minimal_rfc.py")
    occ = plan.resources.occupancy
    assert (occ.cap, occ.in_flight_bytes) == (None, 0)
    assert occ.resident == SM90.resident_blocks(128, plan.resources.shared_bytes)
    source = render(plan)
    assert source.dynamic_shared_bytes == 0 and source.carveout is None
    assert "no pipeline" in format_plan(plan)


def test_a_pipeline_whose_blocks_already_fit_no_more_than_the_cap_is_left_alone():
    # 133632 bytes of shared memory: one block per SM, fewer than the cap of 2
    plan = _plan(VALID / "gemv_dynamic_shared.py")
    res = plan.resources
    occ = res.occupancy
    assert occ.in_flight_bytes > 0 and occ.cap is None and occ.resident == 1
    assert res.launch_shared_bytes == res.dynamic_shared_bytes == 133632
    assert render(plan).carveout is None


def test_a_pipeline_that_feeds_a_gemm_runs_as_many_blocks_as_fit():
    """TileLang's GEMM at 4096³ (128×128×32, 3 stages): 48 KB in flight per block would
    cap a streaming kernel at 2 blocks per SM; a gemm computes on every tile, so the 4
    that fit run, and the launch asks for no padding."""
    source = (ROOT / "tests" / "upstream" / "gemm.py").read_text()
    func = parse_source(source, "gemm.py", params=dict(
        M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=32)).func()
    plan = plan_func(func, "fast")
    res = plan.resources
    occ = res.occupancy
    assert occ.in_flight_bytes == 3 * 2 * 128 * 32 * 2 and occ.cap is None
    assert occ.resident == SM90.resident_blocks(128, res.shared_bytes) == 4
    assert res.launch_shared_bytes == res.dynamic_shared_bytes
    assert "feeds T.gemm" in format_plan(plan)


def _attention(causal: bool):
    source = (ROOT / "tests" / "upstream" / "mha_fwd_bshd.py").read_text() + (
        f"\n_bound = flashattn(batch=1, heads=32, seq_len=4096, dim=128, "
        f"is_causal={causal}, block_M=64, block_N=64, num_stages=1, threads=128)\n")
    return plan_func(parse_source(source, "mha_fwd_bshd.py").func(), "fast")


@pytest.mark.parametrize("causal", [False, True])
def test_a_tensor_core_kernel_holds_its_registers_to_the_blocks_that_fit(causal):
    """Attention at 64 × 64 (64 KB of shared memory: 3 blocks per SM) estimates ~151
    registers a thread, under the 168 that 3 blocks of 128 threads leave each: the
    kernel asks ptxas for 3 blocks' registers (it took 171 unasked in the causal form,
    and ran 2 blocks per SM)."""
    plan = _attention(causal)
    occ = plan.resources.occupancy
    assert occ.resident == 3 and occ.min_blocks == 3
    assert plan.resources.register_words <= 168
    assert "__launch_bounds__(128, 3)" in render(plan).source
    assert "registers held to 3 blocks per SM" in format_plan(plan)
    assert plan_json(plan)["resources"]["occupancy"]["min_blocks"] == 3


def test_registers_are_left_to_ptxas_where_the_estimate_does_not_fit_or_no_gemm_runs():
    """The GEMM's 4 resident blocks would leave 128 registers a thread, under its ~152
    estimate: holding them would spill, so ptxas chooses (166, 3 blocks). A kernel
    without T.gemm keeps ptxas's choice too."""
    source = (ROOT / "tests" / "upstream" / "gemm.py").read_text()
    gemm = plan_func(parse_source(source, "gemm.py", params=dict(
        M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=32)).func(), "fast")
    assert gemm.resources.register_words > 128 and gemm.resources.occupancy.min_blocks is None
    assert "__launch_bounds__(128) " in render(gemm).source
    gemv = _gemv(128, 128, 256)
    assert gemv.resources.occupancy.min_blocks is None
    assert "__launch_bounds__(256) " in render(gemv).source


def test_registers_are_not_held_below_the_floor_where_ptxas_refused_the_wgmma():
    """Regressions from the H200 (2026-12-04): held to 9 blocks (56 registers a thread,
    the estimate 56) the 64 × 64 × 32 GEMM did not compile (ptxas C7602: one wgmma
    needs 58), nor did a 384-thread wgmma held to 3 blocks (56). Below HELD_FLOOR, or
    without a sixteenth to spare, ptxas chooses."""
    import test_wgmma
    source = (ROOT / "tests" / "upstream" / "gemm.py").read_text()
    small = plan_func(parse_source(source, "gemm.py", params=dict(
        M=512, N=512, K=1024, block_M=64, block_N=64, block_K=32)).func(), "fast")
    wide = test_wgmma._plan(test_wgmma._program(m=192, n=64, k=128, threads=384))
    for plan in (small, wide):
        occ = plan.resources.occupancy
        assert occ.resident >= 2 and occ.min_blocks is None
        assert f"__launch_bounds__({plan.resources.threads}) " in render(plan).source


# ----------------------------------------------------------------------------- reports

def test_plan_text_and_json_state_the_cap():
    plan = _gemv(128, 128, 256)
    text = format_plan(plan)
    assert ("occupancy: at most 2 blocks per SM (64.5 KB in flight per block, 64.0 KB "
            "per SM suffice: 2 instead of the 3 that fit by threads and shared memory): "
            "every launch asks for 115712 bytes of dynamic shared memory, 49152 of them "
            "padding") in text
    doc = plan_json(plan)["resources"]
    assert doc["occupancy"] == {"resident": 3, "in_flight_bytes": 66048, "cap": 2,
                                "launch_shared_bytes": 115712,
                                "reason": plan.resources.occupancy.reason,
                                "min_blocks": None}
    assert doc["limits"]["shared_per_sm"] == 233472
    assert doc["limits"]["shared_reserved"] == 1024


def test_plan_json_with_an_occupancy_matches_the_schema():
    pytest.importorskip("jsonschema")
    from verify_reducer.json_schemas import schema, validator
    defs = schema("defs")
    resources = validator("defs.schema.json#/$defs/resources")
    for plan in (_gemv(128, 128, 256), _plan(ROOT / "examples" / "minimal_rfc.py")):
        resources.validate(plan_json(plan)["resources"])
    assert "occupancy" in defs["$defs"]["resources"]["required"]


class _Kernel:
    def __init__(self):
        self.attributes = {}

    def set_attribute(self, attribute, value):
        self.attributes[attribute] = value


def test_runner_launches_a_capped_kernel_with_its_padding_and_the_largest_carveout():
    driver = SimpleNamespace(function_attribute=SimpleNamespace(
        MAX_DYNAMIC_SHARED_SIZE_BYTES="max dynamic", PREFERRED_SHARED_MEMORY_CARVEOUT="carveout"))
    kernel = _Kernel()
    launch = launch_arguments(render(_gemv(128, 128, 256)), kernel, driver)
    assert launch["shared"] == 115712
    assert kernel.attributes == {"max dynamic": 115712, "carveout": 100}
    uncapped = _Kernel()
    assert launch_arguments(render(_plan(ROOT / "examples" / "minimal_rfc.py")), uncapped,
                            driver)["shared"] == 0
    assert uncapped.attributes == {}


def test_occupancy_sweep_dry_run_lists_the_cap_and_the_counts(capsys):
    assert occupancy_sweep.main(["--dry-run", "--tilings", "128x128/256,32x64/128",
                                 "--dtype", "float16"]) == 0
    out = capsys.readouterr().out
    assert "65536x4096 float16 128x128/256 occupancy: at most 2 blocks per SM" in out
    assert "sweep: o = 3, 2, 1" in out
    assert "sweep: o = " + ", ".join(str(o) for o in range(16, 0, -1)) in out
