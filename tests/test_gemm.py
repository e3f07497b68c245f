"""T.gemm (issue 28): the frontend's refusals, the interpreter's exact meaning and bound,
TileLang's warp split and accumulator layout, the thread program the simulator executes
and the CUDA prints, a planted layout fault the simulator catches, and the GPU runs."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.lower import gemm as lowered
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.indexexpr import Var, floordiv, mod
from verify_reducer.spec.layout import Layout, index_names

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
GEMM_PROGRAMS = sorted(VALID.glob("gemm_*.py"))


def _kernel(body: str, a="(32, 16), T.float16", b="(16, 32), T.float16",
            c="(32, 32), T.float32", threads=128) -> str:
    return "import tilelang.language as T\n\n\n" + textwrap.dedent(f"""\
        @T.prim_func
        def main(x: T.Tensor((32, 16), T.float16)):
            with T.Kernel(1, threads={threads}) as bx:
                a_s = T.alloc_shared({a})
                b_s = T.alloc_shared({b})
                acc = T.alloc_fragment({c})
                loc = T.alloc_local((32, 32), T.float32)
        """) + textwrap.indent(textwrap.dedent(body), " " * 8)


# ----------------------------------------------------------------------------- frontend

@pytest.mark.parametrize("body, kw, code, words", [
    ("T.gemm(a_s, b_s, acc)", {"b": "(32, 32), T.float16"}, "R102", "K sizes differ"),
    ("T.gemm(a_s, b_s, acc, transpose_B=True)", {}, "R102", "K sizes differ"),
    ("T.gemm(a_s, b_s, acc)", {"b": "(16, 16), T.float16"}, "R102", "N sizes differ"),
    ("T.gemm(a_s, b_s, acc, transpose_A=True)", {"a": "(16, 16), T.float16"}, "R102",
     "M sizes differ"),
    ("T.gemm(a_s, b_s, acc)", {"c": "(32, 32), T.float16", "a": "(32, 16), T.bfloat16",
                               "b": "(16, 32), T.bfloat16"}, "R102", "bfloat16"),
    ("T.gemm(a_s, b_s, acc)", {"a": "(32, 16), T.float32", "b": "(16, 32), T.float32"},
     "R102", "float32 × float32"),
    ("T.gemm(a_s, b_s, loc)", {}, "R102", "accumulates into a fragment"),
    ("T.gemm(x, b_s, acc)", {}, "R102", "shared or fragment"),
    ("T.gemm(a_s, b_s, acc, wg_wait=1)", {}, "R101", "wg_wait"),
    ("T.gemm(a_s, b_s, acc, mbar=a_s)", {}, "R101", "mbar"),
    ("T.gemm(a_s, b_s, acc, policy=7)", {}, "R102", "policy"),
    ("T.gemm(a_s, b_s, acc, transpose_A=bx)", {}, "R102", "constant bool"),
    ("T.gemm(a_s, b_s, acc, k_pack=0)", {}, "R102", "k_pack"),
    ("T.gemm(a_s, b_s, acc, clear_accum=2)", {}, "R102", "clear_accum"),
    ("T.wgmma_gemm(a_s, b_s, acc)", {}, "R101", "wgmma_gemm"),
])
def test_frontend_refuses_with_a_diagnostic(body, kw, code, words):
    with pytest.raises(DiagnosticError) as info:
        parse_source(_kernel(body, **kw))
    (d,) = info.value.diagnostics
    assert d.code == code and words in d.message, d.message
    assert d.span.line >= 10


def test_frontend_reads_policy_and_clear_accum():
    func = parse_source(_kernel("""\
        for k in T.serial(2):
            T.gemm(a_s, b_s, acc, policy=T.GemmWarpPolicy.FullCol, clear_accum=(k == 0))
        T.gemm(a_s, b_s, acc, False, False, 1, True, 1, 0)
    """)).func()
    first = func.kernel.body[-2].body[0]
    second = func.kernel.body[-1]
    assert (first.policy, second.policy) == ("FullCol", "FullRow")
    assert first.clear_accum.dtype.name == "bool" and second.clear_accum.value is True
    assert first.mnk == (32, 32, 16)


# ----------------------------------------------------------------------------- meaning

def _operands(dtype, rng, m=32, n=32, k=16):
    a = rng.standard_normal((m, k)) * 4
    b = rng.standard_normal((k, n)) * 4
    return a.astype(dtype), b.astype(dtype)


def _run_gemm(a, b, c_dtype, a_dtype, seed_c=None, transpose_b=False):
    m, k = a.shape
    n = b.shape[0] if transpose_b else b.shape[1]
    clear = seed_c is None
    src = "import tilelang.language as T\n\n\n" + textwrap.dedent(f"""\
        @T.prim_func
        def main(a: T.Tensor({a.shape}, T.{a_dtype}), b: T.Tensor({b.shape}, T.{a_dtype}),
                 c: T.Tensor(({m}, {n}), T.{c_dtype})):
            with T.Kernel(1, threads=128) as bx:
                a_s = T.alloc_shared({a.shape}, T.{a_dtype})
                b_s = T.alloc_shared({b.shape}, T.{a_dtype})
                acc = T.alloc_fragment(({m}, {n}), T.{c_dtype})
                T.copy(a, a_s)
                T.copy(b, b_s)
                T.copy(c, acc)
                T.gemm(a_s, b_s, acc, transpose_B={transpose_b}, clear_accum={clear})
                T.copy(acc, c)
    """)
    func = parse_source(src).func()
    c0 = np.zeros((m, n)) if seed_c is None else seed_c
    result = run(func, {"a": a, "b": b, "c": c0.astype(np.dtype(c_dtype)
                                                     if c_dtype != "bfloat16" else np.float32)})
    return result.outputs["c"], result.bounds["c"]


@pytest.mark.parametrize("a_dtype, c_dtype", [("float16", "float32"), ("bfloat16", "float32"),
                                              ("float8_e4m3fn", "float32"),
                                              ("float16", "float16")])
def test_interpreter_is_the_exact_sum_rounded_once(a_dtype, c_dtype):
    from verify_reducer.spec.dtypes import DTYPES
    rng = np.random.default_rng(1)
    dt = DTYPES[a_dtype]
    a = dt.quantize(rng.standard_normal((32, 16)) * 4)
    b = dt.quantize(rng.standard_normal((16, 32)) * 4)
    seed = DTYPES[c_dtype].quantize(rng.standard_normal((32, 32)))
    got, bound = _run_gemm(a, b, c_dtype, a_dtype, seed_c=seed)
    exact = seed.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    want = DTYPES[c_dtype].quantize(exact)
    # the reference is the exact sum rounded once (ties aside, which random data avoids)
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64))
    assert (bound > 0).any() and np.isfinite(bound).all()
    # a plain k-order accumulation in the accumulator's dtype is within the bound
    plain = seed.astype(np.float32)
    for k in range(16):
        plain = DTYPES[c_dtype].quantize(
            plain + a[:, k:k + 1].astype(np.float32) * b[k:k + 1, :].astype(np.float32))
    assert within_bound(plain.astype(got.dtype), got, bound).all()


def test_int8_accumulates_exactly_into_int32_and_wraps():
    a = np.full((32, 16), -128, np.int8)
    b = np.full((16, 32), -128, np.int8)
    seed = np.full((32, 32), 2 ** 31 - 1, np.int64).astype(np.int32)
    got, bound = _run_gemm(a, b, "int32", "int8", seed_c=seed)
    want = ((2 ** 31 - 1 + 16 * 128 * 128 + 2 ** 31) % 2 ** 32) - 2 ** 31
    assert (got == want).all() and (bound == 0).all()


def test_transposed_operand_and_clear_accum():
    rng = np.random.default_rng(2)
    a = rng.integers(-8, 8, (32, 16)).astype(np.float16)
    b_t = rng.integers(-8, 8, (32, 16)).astype(np.float16)
    got, bound = _run_gemm(a, b_t, "float32", "float16", transpose_b=True)
    # small integers: every order is exact (bound 0), the result is the integer product
    assert np.array_equal(got, (a.astype(np.int64) @ b_t.T.astype(np.int64)))
    assert (bound == 0).all()


def test_gemm_inside_parallel_is_refused():
    from verify_reducer.verify.oracle import pipeline
    src = _kernel("""\
        for i in T.Parallel(4):
            T.gemm(a_s, b_s, acc)
    """)
    with pytest.raises(DiagnosticError):
        run(parse_source(src).func(), {"x": np.zeros((32, 16), np.float16)})
    assert pipeline is not None


# ----------------------------------------------------------------------------- layouts

@pytest.mark.parametrize("policy, m, n, warps, split", [
    ("Square", 64, 64, 4, (2, 2)), ("Square", 128, 64, 4, (2, 2)),
    ("Square", 128, 128, 8, (2, 4)), ("FullRow", 128, 128, 4, (4, 1)),
    ("FullRow", 32, 64, 4, (2, 2)), ("FullCol", 64, 128, 8, (1, 8)),
    ("FullCol", 64, 16, 4, (2, 2)), ("Square", 16, 8, 1, (1, 1)),
])
def test_warp_partition_as_tilelang(policy, m, n, warps, split):
    assert lowered.warp_partition(policy, m, n, warps) == split


def test_warp_partition_refuses_what_tilelang_refuses():
    assert "cannot be split" in lowered.warp_partition("Square", 48, 8, 4)
    assert "cannot be split" in lowered.warp_partition("FullRow", 24, 64, 1)


@pytest.mark.parametrize("m, n, warps, policy", [(64, 64, 4, "Square"),
                                                 (128, 64, 4, "FullRow"),
                                                 (64, 128, 8, "FullCol"), (16, 8, 1, "Square")])
def test_accumulator_layout_is_the_m16n8_tile_and_the_lowering_inverts_it(m, n, warps, policy):
    wm, wn = lowered.warp_partition(policy, m, n, warps)
    layout = lowered.accumulator_layout(m, n, wm, wn, 0)
    threads, slots = layout.threads_of()[0], layout.slots_of()
    assert len(set(zip(threads.tolist(), slots.tolist()))) == m * n
    assert layout.slots_per_thread == m * n // (32 * warps)
    # the m16n8 C fragment of PTX: lane l holds rows l/4 and l/4 + 8, columns 2(l%4)+{0,1}
    i, j = layout.all_indices()
    first = (i < 16) & (j < 8)
    assert np.array_equal(threads[first] % 32, 4 * (i[first] % 8) + j[first] // 2)
    assert np.array_equal(slots[first], j[first] % 2 + 2 * (i[first] // 8))


# the mma.sync form's tests plan for sm_80 (sm_90 runs a gemm of shared operands as
# wgmma where it fits: codegen.lower.wgmma, tests/test_wgmma.py)
MMA_TARGET = "sm_80"


def _plan(path: Path, planner: str = "canonical", target: str = MMA_TARGET):
    from verify_reducer.codegen.plan import plan_func
    return plan_func(parse_file(str(path)).func(), planner, target=target)


def test_lowering_inverts_the_placed_layout_and_describes_it():
    physical = _plan(VALID / "gemm_row_max.py")
    stmt = next(s for s in __import__("verify_reducer.spec.ir", fromlist=["walk"]).walk(
        physical.func.kernel.body) if type(s).__name__ == "Gemm")
    low = lowered.lower_gemm(physical, stmt)
    layout = physical.layouts.fragments[stmt.c]
    t = np.repeat(np.arange(128), low.slots)
    s = np.tile(np.arange(low.slots), 128)
    rows = low.row.evaluate({"t": t, "s": s})
    cols = low.col.evaluate({"t": t, "s": s})
    assert np.array_equal(layout.threads_of((rows, cols))[0], t)
    assert np.array_equal(layout.slots_of((rows, cols)), s)
    assert "4×1 warps" in low.describe() and "f32.f16.f16.f32" in low.describe()
    # the mma form's C registers are the same elements in the same slots
    mma = low.mma
    t, mi, ni, r = (a.reshape(-1) for a in np.meshgrid(
        np.arange(128), np.arange(mma.a.tiles), np.arange(mma.b.tiles), np.arange(4),
        indexing="ij"))
    flat = mma.c_index.evaluate({"t": t, "mi": mi, "ni": ni, "r": r})
    i, j = np.unravel_index(flat, stmt.c.shape)
    assert np.array_equal(layout.threads_of((i, j))[0], t)
    assert np.array_equal(layout.slots_of((i, j)), mma.c_slot(mi, ni, r))


# ----------------------------------------------------------------------------- pipeline

@pytest.mark.parametrize("path", GEMM_PROGRAMS, ids=lambda p: p.name)
def test_simulator_agrees_with_the_interpreter(path):
    from verify_reducer.verify.oracle import pipeline
    report = pipeline.check(str(path), blocks="all")
    assert report.exit_code == pipeline.EXIT_OK, [d.message for d in report.diagnostics]


def test_thread_program_and_cuda_print_the_lowering():
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.lower.program import lower
    physical = _plan(VALID / "gemm_pipelined_clear.py")
    text = lower(physical).describe()
    assert "| gemm: mma.sync m16n8k16 (f32.f16.f16.f32): 1×4 warps" in text
    cuda = render(physical).source
    assert "const bool gemm_clear = ko == 0;" in cuda or "gemm_clear = (ko == 0)" in cuda
    assert "for (int gemm_ks = 0; gemm_ks < " in cuda
    # A stored K×M (transpose_A): a register's two k are a row apart, so ldmatrix
    # .trans delivers them, each lane supplying a row at the pipeline stage's offset
    assert "reducer_ldmatrix_x4_trans(gemm_a[gemm_mi], &a_s[a_s_stage + " in cuda
    assert "reducer_mma_f32_f16(acc[" in cuda


def test_mma_fragment_maps_are_the_ptx_isa_tables():
    """Every element of the m16n8k16 A (16×16), B (16×8) and C (16×8) tiles is in
    exactly one (lane, register), as PTX's fragment figures draw them."""
    lane, reg = Var("l"), Var("r")
    for position, registers, shape in ((lowered.mma_a_position, 8, (16, 16)),
                                       (lowered.mma_b_position, 4, (16, 8)),
                                       (lowered.mma_c_position, 4, (16, 8))):
        env = {"l": np.arange(32)[:, None], "r": np.arange(registers)[None, :]}
        rows, cols = (np.broadcast_to(e.evaluate(env), (32, registers))
                      for e in position(lane, reg))
        assert len(set(zip(rows.reshape(-1).tolist(), cols.reshape(-1).tolist()))) \
            == shape[0] * shape[1] == 32 * registers
        assert rows.max() == shape[0] - 1 and cols.max() == shape[1] - 1
    # a0 of lane 5: row 5 // 4 = 1, columns 2·(5 % 4) = 2; a7: row 9, column 11
    assert [int(x.evaluate({})) for x in lowered.mma_a_position(5, 7)] == [9, 11]
    assert [int(x.evaluate({})) for x in lowered.mma_b_position(5, 3)] == [11, 1]


@pytest.mark.parametrize("program", ["gemm_fragment_a.py", "gemm_fragment_b.py",
                                     "gemm_fragment_transposed.py"])
def test_mma_reads_a_fragment_in_the_slots_its_layout_keeps(program):
    """A fragment operand is the lane's own registers: the slot each mma register names
    is the slot the operand's layout keeps that element in, on that very thread."""
    from verify_reducer.spec import ir
    physical = _plan(VALID / program)
    for stmt in ir.walk(physical.func.kernel.body):
        if not isinstance(stmt, ir.Gemm):
            continue
        mma = lowered.lower_gemm(physical, stmt).mma
        for op in (mma.a, mma.b):
            if op.slot is None:
                continue
            layout = physical.layouts.fragments[op.buffer]
            t, tile, step, r = (a.reshape(-1) for a in np.meshgrid(
                np.arange(layout.count), np.arange(op.tiles), np.arange(mma.steps),
                np.arange(op.registers), indexing="ij"))
            env = {"t": t, "tile": tile, "ks": step, "r": r}
            flat = np.broadcast_to(op.index.evaluate(env), t.shape)
            at = np.unravel_index(flat, op.buffer.shape)
            assert (layout.threads_of(at) == t).any(axis=0).all()
            assert np.array_equal(layout.slots_of(at), op.slot.evaluate(env))


@pytest.mark.parametrize("body, kw, code, words", [
    # 48 rows cannot be cut into 16-row tiles over 4 warps (TileLang's fatal error)
    ("T.gemm(a_s, b_s, acc)", {"a": "(48, 16), T.float16", "b": "(16, 8), T.float16",
                               "c": "(48, 8), T.float32"},
     "R102", "cannot be split among 4 warp(s)"),
    # an 8-bit A in a fragment (the mma's k32 tiles): the interpreter runs it, the plan
    # refuses it by name
    ("g = T.alloc_fragment((32, 16), T.int8)\nT.copy(a_s, g)\nT.gemm(g, b_s, acc)",
     {"a": "(32, 16), T.int8", "b": "(16, 32), T.int8", "c": "(32, 32), T.int32"},
     "R101", "reading the fragment g"),
    # B in a fragment needs whole 16-deep k tiles too
    ("h = T.alloc_fragment((8, 32), T.float16)\nT.gemm(a_s, h, acc)",
     {"a": "(32, 8), T.float16"}, "R102", "reading B from the fragment h needs K"),
    # A in a fragment needs whole 16-wide k tiles
    ("h = T.alloc_fragment((32, 8), T.float16)\nT.gemm(h, b_s, acc)",
     {"b": "(8, 32), T.float16"}, "R102", "K a multiple of 16"),
    # one accumulator, two warp splits
    ("T.gemm(a_s, b_s, acc, policy=T.GemmWarpPolicy.FullRow)\n"
     "T.gemm(a_s, b_s, acc, policy=T.GemmWarpPolicy.FullCol)", {}, "R300", "needs acc as"),
])
def test_the_plan_refuses_what_it_cannot_lay_out(tmp_path, body, kw, code, words):
    from verify_reducer.verify.oracle import pipeline
    src = _kernel("f = T.alloc_fragment((32, 16), T.float16)\n" + body, **kw)
    path = tmp_path / "k.py"
    path.write_text(src)
    report = pipeline.check(str(path))
    errors = [d for d in report.diagnostics if d.is_error]
    assert [d.code for d in errors] == [code], [d.message for d in errors]
    assert words in errors[0].message and errors[0].span.line >= 12


def test_a_fragment_layout_is_tilelang_gemm_rs_and_the_mma_a_fragment():
    for m, k, wm, wn in [(64, 64, 4, 1), (64, 32, 2, 2), (128, 64, 4, 2)]:
        layout = lowered.operand_layout_a(m, k, wm, wn, 0)
        assert layout.replicate == wn and layout.slots_per_thread == m * k // (32 * wm)
        threads, slots = layout.threads_of(), layout.slots_of()
        i, j = layout.all_indices()
        first = (i < 16) & (j < 16)
        # PTX's m16n8k16 A fragment: lane l holds rows l/4, l/4 + 8, columns 2(l%4) + {0, 1}
        # and the same + 8, in registers a0..a7 in that order
        assert np.array_equal(threads[0][first] % 32, 4 * (i[first] % 8) + (j[first] % 8) // 2)
        assert np.array_equal(slots[first], j[first] % 2 + 2 * (i[first] // 8)
                              + 4 * (j[first] // 8))


def test_b_fragment_layout_is_the_mma_b_operand_replicated_over_the_m_warps():
    for k, n, wm, wn in [(32, 64, 2, 2), (64, 32, 4, 1), (32, 64, 1, 4)]:
        layout = lowered.operand_layout_b(k, n, wm, wn, 0)
        assert layout.replicate == wm and layout.slots_per_thread == k * n // (32 * wn)
        threads, slots = layout.threads_of(), layout.slots_of()
        kk, j = layout.all_indices()
        first = (kk < 16) & (j < 8)
        # PTX's m16n8k16 B fragment: lane l holds column l/4, rows 2(l%4) + {0, 1} and
        # the same + 8, in registers b0..b3 in that order
        assert np.array_equal(threads[0][first] % 32, 4 * j[first] + (kk[first] % 8) // 2)
        assert np.array_equal(slots[first], kk[first] % 2 + 2 * (kk[first] // 8))
        # every replica of a column is in a warp whose N index owns that column
        for r in range(wm):
            warp = threads[r] // 32
            assert np.array_equal(warp // wm, (j % (8 * wn)) // 8)


def test_a_transposed_operand_in_a_fragment_is_laid_out_by_its_logical_element():
    """transpose_A / transpose_B in a fragment: the element stored at (k, i) of a
    transposed A sits where A[i, k] would, so the mma reads the same registers."""
    for transposed, plain in ((lowered.operand_layout_a(64, 32, 2, 2, 0, True),
                               lowered.operand_layout_a(64, 32, 2, 2, 0)),
                              (lowered.operand_layout_b(32, 64, 2, 2, 0, True),
                               lowered.operand_layout_b(32, 64, 2, 2, 0))):
        assert transposed.shape == plain.shape[::-1]
        i, j = plain.all_indices()
        assert np.array_equal(transposed.threads_of((j, i)), plain.threads_of((i, j)))
        assert np.array_equal(transposed.slots_of((j, i)), plain.slots_of((i, j)))


def _planted(monkeypatch, operand: str, **change):
    """The lowering with one field of an mma operand ("a", "b") or of the mma itself
    (operand "") replaced: change maps a field name to fn(old value) -> new value."""
    import dataclasses
    real = lowered.lower_gemm

    def planted(plan, stmt, target=None):
        low = real(plan, stmt, target)
        target = getattr(low.mma, operand) if operand else low.mma
        fields = {name: fn(getattr(target, name)) for name, fn in change.items()}
        target = dataclasses.replace(target, **fields)
        mma = dataclasses.replace(low.mma, **{operand: target}) if operand else target
        return dataclasses.replace(low, mma=mma)

    monkeypatch.setattr(lowered, "lower_gemm", planted)


def _simulated(program: str, target: str = MMA_TARGET):
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    physical = _plan(VALID / program, target=target)
    return simulate(physical, prepare(physical.func, seed=0))


def test_planted_wrong_fragment_register_is_caught(monkeypatch):
    """The A fragment's registers 0 and 1 swapped (the two k of a pair): each names the
    slot of the other element (R300, the layout drawn)."""
    r = Var(lowered.REG)
    _planted(monkeypatch, "a", slot=lambda slot: None if slot is None else
             slot + 1 - mod(r, 2) * 2)
    violations = _simulated("gemm_fragment_a.py").violations
    found = [d for d in violations if "mma reads slot" in d.message]
    assert found and found[0].code == "R300" and found[0].span.line == 33, \
        [d.message for d in violations]


def test_planted_wrong_accumulator_register_is_caught(monkeypatch):
    """The mma's C registers 1 and 2 exchanged: the slot written holds another
    element under C's layout (R300)."""
    _planted(monkeypatch, "", c_index=lambda index: index)  # the same lowering ...
    real = lowered.Mma.c_slot
    monkeypatch.setattr(lowered.Mma, "c_slot",           # ... naming the wrong slots
                        lambda self, mi, ni, reg: real(self, mi, ni, 3 - reg))
    violations = _simulated("gemm_square.py").violations
    found = [d for d in violations if "mma writes slot" in d.message]
    assert found and found[0].code == "R300", [d.message for d in violations]


def _refuted(program: str, target: str = MMA_TARGET) -> list:
    from verify_reducer.verify.oracle import pipeline
    report = pipeline.check(str(VALID / program), target=target)
    wrong = [c for label, cs in report.comparisons.items() for c in cs
             if label != "interp" and not c.ok]
    assert report.exit_code != pipeline.EXIT_OK and wrong
    return wrong


def test_planted_wrong_shared_load_gives_a_wrong_value_the_check_catches(monkeypatch):
    """B's registers loaded lane by lane (no ldmatrix) with k and k + 1 swapped: the
    tiles the warps multiply hold other elements, so C is not A·B and the check says so
    with the element (the interpreter's reference, the simulator's value)."""
    _planted(monkeypatch, "b", index=lambda index: index + 64 * (
        1 - 2 * mod(Var(lowered.REG), 2)), whole=lambda w: False, ldmatrix=lambda m: None)
    wrong = _refuted("gemm_square.py")
    assert wrong[0].name == "c" and wrong[0].got != wrong[0].expected


def test_planted_wrong_ldmatrix_row_gives_a_wrong_value_the_check_catches(monkeypatch):
    """A's ldmatrix with every lane supplying the next row's address: the warp's A
    tiles are shifted a row, and the check refutes C."""
    import dataclasses
    _planted(monkeypatch, "a", ldmatrix=lambda m: dataclasses.replace(
        m, address=m.address + 32 * (1 - 2 * mod(Var(lowered.THREAD), 2))))
    wrong = _refuted("gemm_square.py")
    assert wrong[0].name == "c" and wrong[0].got != wrong[0].expected


def _swapped_rows_layout(m, n, wm, wn, offset):
    """A planted fault: TileLang's accumulator layout with rows 2r and 2r + 1 of every 8
    exchanged among the lanes (still one holder per element, so inference accepts it)."""
    i, j = (Var(x) for x in index_names(2))
    right = lowered.accumulator_layout(m, n, wm, wn, offset)
    swapped = mod(i, 8) + 1 - mod(i, 2) * 2
    lane = swapped * 4 + floordiv(mod(j, 8), 2)
    warp = floordiv(mod(i, 16 * wm), 16) + floordiv(mod(j, 8 * wn), 8) * wm
    return Layout(right.shape, right.index_vars, lane + warp * 32, right.slot, right.count,
                  1, offset)


def test_planted_wrong_accumulator_layout_is_caught_with_a_counterexample(monkeypatch):
    from verify_reducer.codegen import layout as layout_mod
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    monkeypatch.setattr(layout_mod, "accumulator_layout", _swapped_rows_layout)
    physical = _plan(VALID / "gemm_row_max.py")
    result = simulate(physical, prepare(physical.func, seed=0))
    held = [d for d in result.violations if d.code == "R300"]
    assert held, [d.message for d in result.violations]
    d = held[0]
    assert "does not hold" in d.message and d.span.line == 20
    assert d.counterexample is not None and d.counterexample.grid == ("fragment", "s")


# ----------------------------------------------------------------------------- GPU

@pytest.mark.gpu
@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("target", ["sm_90", MMA_TARGET])
@pytest.mark.parametrize("path", GEMM_PROGRAMS, ids=lambda p: p.name)
def test_gpu_cuda_matches_the_interpreter(path, planner, target):
    """Each gemm program on the H200 as sm_90 plans it (wgmma where it fits) and as
    sm_80 plans it (mma.sync everywhere)."""
    from cuda_env import cuda_within_the_interpreters_bound
    cuda_within_the_interpreters_bound(path, planner, target)


def test_eight_bit_operands_take_the_k32_instruction_where_the_target_has_it():
    """int8 → int32 on every target and float8 → float32 from sm_89 on run
    mma.sync.m16n8k32 (four elements to a register, one 32-bit load where they are
    adjacent); below sm_89 a float8 gemm stays multiply-adds."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.spec import ir
    func = parse_file(str(VALID / "gemm_int8.py")).func()
    low = lowered.lower_gemm(plan := plan_func(func, "canonical"), next(
        s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.Gemm)))
    assert low.mma.k == 32 and low.mma.instruction == "s32.s8.s8.s32"
    assert low.mma.a.packed == 4 and low.mma.a.whole and low.mma.a.registers == 16
    assert "reducer_mma_s32_s8(" in render(plan).source
    func = parse_file(str(VALID / "gemm_bf16_fp8_columns.py")).func()
    for target, form in (("sm_90", "reducer_mma_f32_e4m3("), ("sm_89", "reducer_mma_f32_e4m3("),
                         ("sm_80", "gemm_acc = gemm_acc + ")):
        cuda = render(plan_func(func, "canonical", target=target)).source
        assert form in cuda, target


def test_shared_operands_get_padded_rows_the_renderer_and_resources_use():
    """gemm_square: a_s (64 × 32 fp16, 64-byte rows) and b_s (32 × 64, 128-byte rows)
    conflict on the mma loads; the plan pads each row by 16 bytes, every access (the
    copies' vectors, the mma loads) is row·pitch + column, and the allocation is
    rows × pitch. Each stage of a pipelined operand is rows × pitch apart."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.plan_pitch import plan_pitches
    plan = _plan(VALID / "gemm_square.py")
    pitches = {b.name: p for b, p in plan.pitches}
    assert pitches == {"a_s": 40, "b_s": 72}
    shared = {a.name: a.elements for a in plan.resources.shared}
    assert shared["a_s"] == 64 * 40 and shared["b_s"] == 32 * 72
    cuda = render(plan).source
    assert "&a_s[40*i + 8*j_run]" in cuda and "&b_s[72*i + 8*j_run]" in cuda
    assert "40*(gemm_t % 8)" in cuda                 # an ldmatrix row step is the pitch
    # a row not a multiple of 32 bytes (a_s: 8 fp16) keeps its plain layout
    assert [(b.name, p) for b, p in plan_pitches(parse_source(_kernel(
        "T.gemm(a_s, b_s, acc)", a="(32, 8), T.float16", b="(8, 32), T.float16")).func())] \
        == [("b_s", 40)]
    staged = _plan(VALID / "gemm_pipelined_clear.py")
    pitch = dict((b.name, p) for b, p in staged.pitches)
    assert f"% 2) * {16 * pitch['b_s']};" in render(staged).source


EPILOGUE = """
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 64), T.float16), B: T.Tensor((64, 256), T.float16),
         C: T.Tensor((128, 256), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((128, 64), T.float16)
        B_s = T.alloc_shared((64, 256), T.float16)
        acc = T.alloc_fragment((128, 256), T.float32)
        C_s = T.alloc_shared((128, 256), T.float16)
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, acc, clear_accum=True)
        T.copy(acc, C_s)
        T.copy(C_s, C)
"""


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_shared_tile_an_accumulator_is_copied_into_gets_padded_rows(target):
    """A GEMM epilogue (acc -> C_s, 512-byte fp16 rows): the accumulator's lanes write
    eight rows at once, which 512-byte rows put on the same banks; the plan pads C_s by
    16 bytes a row, the store and the 16-byte copy out both address row·pitch, and the
    simulator still equals the interpreter."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    plan = plan_func(parse_source(EPILOGUE, "<epilogue>").func(), "auto", target=target)
    assert dict((b.name, p) for b, p in plan.pitches)["C_s"] == 264
    assert {a.name: a.elements for a in plan.resources.shared}["C_s"] == 128 * 264
    cuda = render(plan).source
    assert "C_s[264*i + j] = __float2half_rn(" in cuda
    assert "reinterpret_cast<const uint4*>(&C_s[264*i + 8*j_run])" in cuda
    inputs = prepare(plan.func, seed=0)
    reference = run(plan.func, inputs)
    sim = simulate(plan, inputs)
    assert sim.violations == []
    assert within_bound(sim.outputs["C"], reference.outputs["C"], reference.bounds["C"]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_gpu_the_padded_epilogue_equals_the_interpreter(target, tmp_path):
    path = tmp_path / "epilogue.py"
    path.write_text(EPILOGUE)
    from cuda_env import cuda_within_the_interpreters_bound
    cuda_within_the_interpreters_bound(path, "canonical", target)


@pytest.mark.gpu
@pytest.mark.parametrize("planner", ["canonical", "fast"])
def test_gpu_tensor_core_truncation_stays_within_the_bound(planner):
    """The tensor-core term of the bound (docs/semantics.md §9.1) against the hardware:
    each row of A·B is one product of 2048 and 31 products near 2⁻¹², which an mma
    aligns to 2048's exponent and truncates. The H200's C must lie within the
    interpreter's bound for every element; the test also counts how many differ from
    the correctly rounded sum, to show the bound is exercised (printed, not asserted:
    the count is the hardware's)."""
    from cuda_env import gpu_problem, plan as plan_of
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.interp.accept import within_bound
    problem = gpu_problem()
    if problem is not None:
        pytest.skip(problem)
    physical = plan_of(VALID / "gemm_square.py", planner)
    rng = np.random.default_rng(5)
    a = (rng.uniform(1, 2, (64, 32)) * 2.0 ** -6).astype(np.float16)
    b = (rng.uniform(1, 2, (32, 64)) * 2.0 ** -6).astype(np.float16)
    a[:, 0], b[0, :] = 2048, 1
    inputs = {"a": a, "b": b, "c": np.zeros((64, 64), np.float32)}
    reference = run(physical.func, {k: v.copy() for k, v in inputs.items()})
    got = np.asarray(run_cuda(physical, {k: v.copy() for k, v in inputs.items()})["c"])
    want, bound = reference.outputs["c"], reference.bounds["c"]
    ok = within_bound(got.astype(want.dtype), want, bound)
    assert ok.all(), f"{int((~ok).sum())} of {ok.size} outside the bound"
    print(f"{int((got != want).sum())} of {got.size} elements differ from the correctly "
          f"rounded sum; largest difference {float(np.abs(got - want).max()):.3g}, "
          f"smallest bound {float(bound.min()):.3g}")
