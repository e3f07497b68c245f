"""The fuzzer's split-K family (issue 27): each block of a (row tiles × K slices) grid
finalizes its reducer and adds it into the global output with an atomic. The generator
covers the family, its numpy model is the initial value combined with every slice's
partial (a float16 output rounded once, as docs/semantics.md §12 says), campaigns of it
find no false alarm, and planted faults are caught on the CPU: a replicated atomic (R503
with its count), a missing tail guard (R102: the index is out of bounds), a plain
read-modify-write in place of the atomic (R504, a race between blocks) and the atomics of
one slice skipped (the interpreter disagrees with the description)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cuda_env import NIGHTLY, gpu_problem, requires_nvcc
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.fuzzing import model, splitk
from verify_reducer.verify.fuzzing.campaign import fuzz, groups, kernel_of
from verify_reducer.verify.fuzzing.judge import judge, judge_file, program_text
from verify_reducer.verify.oracle.pipeline import UsageError


def _split_k(**kw) -> splitk.SplitK:
    """10 rows in tiles of 4 (a row tail), 24 columns in 3 slices of 8; the slice is by,
    the row tile bx."""
    base = dict(rows=10, cols=24, tile=4, slice=8, threads=128, split_axis=1, op="sum",
                dtype="float32", in_dtype="float32", out_dtype="float32", value="plain",
                width=0, ctile=1, staged=False, tile_atomic=False, seed=None, magnitude=8, base=8,
                input_seed=3)
    return splitk.SplitK(**{**base, **kw})


def _draws(seed: int, n: int) -> list[splitk.SplitK]:
    return [kernel_of(seed, case, family="splitk") for case in range(n)]


# ----------------------------------------------------------------------------- generator

def test_the_generator_covers_the_split_k_family():
    kernels = _draws(7, 300)
    assert {s.op for s in kernels} == {"sum", "max", "min"}
    assert {s.out_dtype for s in kernels} == {"float32", "float16", "int32"}
    assert {"int8", "float16"} <= {s.in_dtype for s in kernels}
    assert {s.split_axis for s in kernels} == {0, 1}
    assert {s.value for s in kernels} == {"plain", "gemv", "gemm"}
    for flag in ("staged", "tile_atomic", "row_tail", "col_tail", "width_tail"):
        assert {getattr(s, flag) for s in kernels} == {True, False}, flag
    assert any(s.seed is not None for s in kernels)
    assert any(s.out_dtype == "float16" and s.base > splitk.FLOAT16_EXACT for s in kernels)
    assert {s.tile for s in kernels} >= {1, 16} and min(s.split for s in kernels) == 2
    for s in kernels[:40]:
        func = parse_source(splitk.render(s), "<splitk>").func()
        assert func.kernel.grid == s.grid


def test_the_program_finalizes_then_adds_atomically_under_its_guards():
    text = splitk.render(_split_k(cols=22))
    assert "with T.Kernel(3, 3, threads=128) as (bx, by):" in text
    assert "            if bx * 4 + i < 10 and by * 8 + k < 22:\n" \
           "                T.reducer_update(acc[i], A[bx * 4 + i, by * 8 + k])" in text
    assert "T.finalize_reducer(acc, res)\n" \
           "        for i in T.Parallel(4):\n" \
           "            if bx * 4 + i < 10:\n" \
           "                T.atomic_add(Out[bx * 4 + i], res[i])" in text
    region = splitk.render(_split_k(rows=8, tile_atomic=True, op="max", dtype="int32",
                                    in_dtype="int8", out_dtype="int32"))
    assert "T.atomic_max(Out[bx * 4:bx * 4 + 4], res)" in region
    assert "T.reducer_update(acc[i], T.cast(A[bx * 4 + i, by * 8 + k], T.int32))" in region
    # TileLang's split-K GEMM: column tiles × row tiles × slices, each block's (R, C)
    # reducer over T.Parallel(R, C, KS), the column tail guarded too
    gemm = splitk.render(_split_k(value="gemm", width=6, ctile=4, staged=False))
    assert "with T.Kernel(2, 3, 3, threads=128) as (bx, by, bz):" in gemm
    assert "for i, j, k in T.Parallel(4, 4, 8):\n" \
           "            if by * 4 + i < 10 and bx * 4 + j < 6:\n" \
           "                T.reducer_update(acc[i, j], A[by * 4 + i, bz * 8 + k] * " \
           "B[bz * 8 + k, bx * 4 + j])" in gemm
    assert "T.atomic_add(Out[by * 4 + i, bx * 4 + j], res[i, j])" in gemm


# ----------------------------------------------------------------------------- model

def test_the_model_is_the_initial_value_and_every_slice():
    s = _split_k(cols=22, dtype="int32", in_dtype="int8", out_dtype="int32")
    given = model.inputs(s)
    assert given["A"].shape == (10, 22) and given["Out"].shape == (10,)
    a, out0 = given["A"].astype(np.int64), given["Out"].astype(np.int64)
    assert np.array_equal(model.expected(s, given)["Out"], out0 + a.sum(axis=1))
    seeded = dataclasses.replace(s, seed=2)          # every one of the 3 blocks starts at 2
    assert np.array_equal(model.expected(seeded, given)["Out"], out0 + a.sum(axis=1) + 6)
    highest = dataclasses.replace(s, op="max")
    assert np.array_equal(model.expected(highest, given)["Out"],
                          np.maximum(out0, a.max(axis=1)))
    gemv = _split_k(value="gemv")
    given = model.inputs(gemv)
    want = given["Out"].astype(np.float64) + \
        given["A"].astype(np.float64) @ given["x"].astype(np.float64)
    assert np.array_equal(model.expected(gemv, given)["Out"], want)
    gemm = _split_k(value="gemm", width=6, ctile=4, dtype="int32", in_dtype="int8",
                    out_dtype="int32")
    given = model.inputs(gemm)
    assert given["B"].shape == (24, 6) and given["Out"].shape == (10, 6)
    want = given["Out"].astype(np.int64) + \
        given["A"].astype(np.int64) @ given["B"].astype(np.int64)
    assert np.array_equal(model.expected(gemm, given)["Out"], want)


def test_a_float16_output_is_the_exact_sum_rounded_once():
    # initial values up to 6144: float16's spacing there is 2 or 4, so the sums round;
    # every partial (8 columns of values up to 8) is a float16 integer, the atomic's
    # operand as it is
    s = _split_k(out_dtype="float16", base=3 * splitk.FLOAT16_EXACT, input_seed=11)
    given = model.inputs(s)
    parts = splitk.partials(s, given)[:, 0, :]            # (rows, slices)
    exact = given["Out"].astype(np.float64) + \
        parts.astype(np.float16).astype(np.float64).sum(axis=1)
    want = model.expected(s, given)["Out"]
    assert want.dtype == np.float16 and np.array_equal(want, exact.astype(np.float16))
    assert (want.astype(np.float64) != exact).any()       # the rounding shows
    assert judge(s) is None                               # and the interpreter agrees


def test_every_minimizer_variant_is_a_valid_smaller_kernel():
    s = _split_k(cols=22, value="gemv", seed=2, threads=256, in_dtype="float16",
                 out_dtype="float16", base=3 * splitk.FLOAT16_EXACT)
    variants = list(splitk.variants(s))
    assert len(variants) >= 8
    for v in variants:
        assert v != s and v.blocks * v.tile * v.slice <= s.blocks * s.tile * s.slice
        assert judge(v) is None, splitk.render(v)
    gemm = _split_k(value="gemm", rows=12, width=12, ctile=4, cols=22, tile_atomic=True,
                    staged=False)
    gemms = list(splitk.variants(gemm))
    assert {v.value for v in gemms} == {"gemm", "plain"} and len(gemms) >= 6
    for v in gemms:
        parse_source(splitk.render(v), "<variant>").func()
        assert model.expected(v, model.inputs(v))["Out"].shape == v.out_shape


# ----------------------------------------------------------------------------- faults

def _planted_text(s: splitk.SplitK, tmp_path, old: str, new: str):
    """The judge's verdict on s's program with `old` replaced by `new`, against the
    description's inputs and expected result (what the program was meant to compute)."""
    given = model.inputs(s)
    want = model.expected(s, given)
    text = program_text(s, given, want)
    assert old in text, text
    path = tmp_path / "planted.py"
    path.write_text(text.replace(old, new))
    return judge_file(str(path), given, want)


ATOMIC = "T.atomic_add(Out[bx * 4 + i], res[i])"
GUARDED = f"            if bx * 4 + i < 10:\n                {ATOMIC}"


def _replicated(monkeypatch):
    """Every replica of the atomic's T.Parallel issues it: the thread program's issue
    without its replica-0 guard (as tests/test_atomics.py plants it)."""
    from verify_reducer.interp import sim_atomics
    real = sim_atomics.issue_of
    monkeypatch.setattr(sim_atomics, "issue_of", lambda plan, stmt: dataclasses.replace(
        real(plan, stmt), guard_replica=None))


def test_planted_replicated_atomic_is_r503_with_the_contribution_and_its_count(
        monkeypatch):
    _replicated(monkeypatch)
    outcome = judge(_split_k())
    # T.Parallel(4) over 128 threads: every iteration is held by 32 threads
    assert outcome.signature == ("violation", "R503", "simulate", "sim/auto")
    assert "the atomic contribution of iteration (i=0) to Out[0] is applied 32 times" \
        in outcome.summary and "(32 in all)" in outcome.summary


def test_a_campaign_finds_the_replicated_atomic_minimized_and_grouped(tmp_path,
                                                                      monkeypatch):
    _replicated(monkeypatch)
    findings = fuzz(2, 5, str(tmp_path), family="splitk", jobs=1, budget=10)
    assert [f.case for f in findings] == [0, 1]
    (group,) = groups(findings)
    assert group["signature"] == {"kind": "violation", "code": "R503",
                                  "stage": "simulate", "backend": "sim/auto"}
    smallest = (tmp_path / group["representative"]).read_text()
    assert "threads=32" in smallest and "applied 32 times" in smallest


def test_the_family_reaches_the_workers_of_a_pool(tmp_path, monkeypatch):
    _replicated(monkeypatch)              # inherited by the forked workers
    findings = fuzz(2, 5, str(tmp_path), family="splitk", jobs=2, budget=0)
    assert [f.signature[1] for f in findings] == ["R503", "R503"]
    assert all("atomic_" in Path(f.path).read_text() for f in findings)


def test_planted_missing_tail_guard_on_the_atomic_is_out_of_bounds(tmp_path):
    outcome = _planted_text(_split_k(), tmp_path, GUARDED, f"            {ATOMIC}")
    assert outcome.signature == ("rejected", "R102", "frontend", "-")
    assert "index [10] is out of bounds of Out [10]" in outcome.summary


def test_planted_missing_tail_guard_on_the_update_is_out_of_bounds(tmp_path):
    s = _split_k(rows=8, cols=22)                     # the K tail alone
    outcome = _planted_text(s, tmp_path, "if by * 8 + k < 22:\n                T.red",
                            "if True:\n                T.red")
    assert outcome.signature == ("rejected", "R102", "frontend", "-")
    assert "out of bounds of A [8, 22]" in outcome.summary


def test_planted_plain_read_modify_write_is_a_race_between_blocks(tmp_path):
    outcome = _planted_text(_split_k(), tmp_path, ATOMIC,
                            "Out[bx * 4 + i] = Out[bx * 4 + i] + res[i]")
    # rejected before any run (verify/oracle/block_races.py); the judge names a
    # rejection's stage by its code's R5 prefix
    assert outcome.signature == ("rejected", "R504", "simulate", "-")
    assert "race between blocks" in outcome.summary
    assert "a read-modify-write from several blocks" in outcome.summary


def test_planted_skipped_slice_disagrees_with_the_description(tmp_path):
    # a split-K GEMM whose blocks of the last of the 3 slices (bz == 2) never add their
    # partials: every check of the tool passes (each block's contributions are what its
    # program says), and only the description's expected result shows the missing third
    s = _split_k(value="gemm", width=8, ctile=4)
    outcome = _planted_text(s, tmp_path, "if by * 4 + i < 10:\n                T.atomic",
                            "if by * 4 + i < 10 and bz < 2:\n                T.atomic")
    assert outcome.signature == ("oracle", "Out", "interp", "interp")
    assert "the generator's description gives" in outcome.summary


def test_the_region_form_over_one_element_verifies():
    s = _split_k(rows=3, cols=8, tile=1, slice=4, tile_atomic=True, threads=32)
    assert "T.atomic_add(Out[bx:bx + 1], res)" in splitk.render(s)
    assert judge(s) is None


# ----------------------------------------------------------------------------- campaigns

def test_a_split_k_campaign_finds_no_false_alarm(tmp_path):
    count = 400 if NIGHTLY else 24
    drawn = _draws(25, count)
    # sums into float32, float16 and int32, max and min; row sums, GEMVs and GEMMs
    assert len({(s.op, s.out_dtype) for s in drawn}) == 5
    assert {s.value for s in drawn} == {"plain", "gemv", "gemm"}
    findings = fuzz(count, 25, str(tmp_path), family="splitk", jobs=1)
    assert findings == [], [(f.case, f.summary) for f in findings]


def test_an_unknown_family_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no program family 'gemm'"):
        fuzz(1, 0, str(tmp_path), family="gemm")


@pytest.mark.nvcc
@requires_nvcc
def test_split_k_plans_compile_with_nvcc(tmp_path):
    findings = fuzz(40 if NIGHTLY else 3, 25, str(tmp_path), ("sim", "nvcc"),
                    family="splitk", jobs=1)
    assert findings == [], [(f.case, f.summary) for f in findings]


@pytest.mark.gpu
def test_gpu_split_k_campaign_matches_the_interpreter(tmp_path):
    """Both plans' CUDA of every program on the device, within the interpreter's bound
    (a float16 output's chain of atomics rounds at every step there)."""
    problem = gpu_problem()
    if problem is not None:
        pytest.skip(problem)
    # each program compiles both plans (seconds each): 60 keeps the test inside one GPU
    # shard's time (tests/gpu_all.sh); the nvcc test above covers more programs' compiles
    findings = fuzz(60 if NIGHTLY else 24, 25, str(tmp_path), ("sim", "cuda"),
                    family="splitk", jobs=1)
    assert findings == [], [(f.case, f.summary) for f in findings]


def test_the_command_line_draws_the_split_k_family(tmp_path, capsys):
    import json
    from verify_reducer.json_schemas import validator
    from verify_reducer.verify.cli.commands import main
    code = main(["fuzz", "--family", "splitk", "--count", "2", "--seed", "25", "--jobs", "1",
                 "--out", str(tmp_path / "found"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["family"] == "splitk" and doc["findings"] == []
    assert not list(validator("fuzz").iter_errors(doc))
