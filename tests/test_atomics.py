"""T.atomic_add / atomic_max / atomic_min (issue 27): the frontend's forms and refusals,
the interpreter's meaning (every contribution once, in any order; the bound of a float
chain rounded at every step), the thread program's decision (who issues, which
instruction) as the simulator executes it and the CUDA prints it, planted faults the
simulator catches (a replicated atomic: R503 with its count; a guard that leaves an
iteration out: R502), the race of a plain read with another block's atomics (R504), and
the GPU runs of the atomic programs in both plans."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.lower import atomics as lowered
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.frontend import parse_source

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
ATOMIC_PROGRAMS = sorted(VALID.glob("atomic_*.py"))


def _kernel(body: str, out="(32,), T.float32", threads=128, grid=8) -> str:
    return "import tilelang.language as T\n\n\n" + textwrap.dedent(f"""\
        @T.prim_func
        def main(X: T.Tensor(({grid}, 32), T.float32), Out: T.Tensor({out})):
            with T.Kernel({grid}, threads={threads}) as bx:
                frag = T.alloc_fragment((32,), T.float32)
                sh = T.alloc_shared((32,), T.float32)
        """) + textwrap.indent(textwrap.dedent(body), " " * 8)


def _func(source: str) -> ir.PrimFunc:
    return parse_source(source, "<test>").func()


def _plan(source: str, planner: str = "canonical"):
    from verify_reducer.codegen.plan import plan_func
    return plan_func(_func(source), planner)


# ----------------------------------------------------------------------------- frontend

def test_element_form_keeps_op_and_memory_order():
    func = _func(_kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[bx, j], memory_order="release")
            T.atomic_max(Out[j], X[bx, j])
            T.atomic_min(Out[j], 1.5)
        """))
    atomics = [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.AtomicUpdate)]
    assert [(a.op, a.memory_order) for a in atomics] == \
        [("sum", "release"), ("max", None), ("min", None)]


def test_tile_form_over_one_element_is_a_parallel_of_extent_one():
    """TileLang's MakeIterVars: a loop of extent 1 (was a T.Parallel of no extents, on
    which layout inference crashed: tests/programs/valid/atomic_region_one_element.py)."""
    func = _func(_kernel("""\
        T.copy(X[bx, 0:32], sh)
        T.atomic_add(Out[bx:bx + 1], sh[3:4])
        """))
    loop = func.kernel.body[-1]
    assert isinstance(loop, ir.ParallelFor) and loop.extents == (1,)
    (atomic,) = loop.body
    assert not any(isinstance(e, ir.Var) and e.name == loop.vars[0].name
                   for i in atomic.indices for e in ir.subexprs(i))


def test_return_prev_as_a_statement_drops_the_value():
    """The previous value unused: the atomic alone, whatever order the lanes land in."""
    plain = _func(_kernel("T.atomic_add(Out[0], X[bx, 0])"))
    flagged = _func(_kernel("T.atomic_add(Out[0], X[bx, 0], return_prev=True)"))
    (a,) = [s for s in ir.walk(plain.kernel.body) if isinstance(s, ir.AtomicUpdate)]
    (b,) = [s for s in ir.walk(flagged.kernel.body) if isinstance(s, ir.AtomicUpdate)]
    assert (a.op, a.indices[0].value, a.memory_order) == (b.op, b.indices[0].value,
                                                          b.memory_order)


def test_tile_form_is_a_parallel_loop_of_element_atomics():
    func = _func(_kernel("""\
        T.copy(X[bx, 0:32], sh)
        T.atomic_add(Out[0:32], sh)
        """))
    loop = func.kernel.body[-1]
    assert isinstance(loop, ir.ParallelFor) and loop.extents == (32,)
    (atomic,) = loop.body
    assert isinstance(atomic, ir.AtomicUpdate) and atomic.buffer.name == "Out"
    assert isinstance(atomic.value, ir.Load) and atomic.value.buffer.name == "sh"


@pytest.mark.parametrize("body, code, words", [
    ("Out[1] = T.atomic_add(Out[0], X[bx, 0], return_prev=True)", "R100",
     "depends on the order in which the other contributions"),
    ("v = T.atomic_min(Out[0], X[bx, 0], return_prev=True)", "R100", "used as a value"),
    ("Out[1] = T.atomic_addx2(Out[0], X[bx, 0], return_prev=True)", "R100",
     "used as a value"),
    ("Out[1] = T.atomic_add(Out[0], X[bx, 0])", "R100", "returns a handle"),
    ("T.atomic_max(Out[0:32], sh, return_prev=True)", "R100", "TileLang refuses"),
    ("T.atomic_add(Out[0], X[bx, 0], return_prev=1)", "R102", "True or False"),
    ("T.atomic_add(Out[0], X[bx, 0], memory_order='sequential')", "R102", "memory_order"),
    ("T.atomic_add(frag[0], X[bx, 0])", "R102", "fragment buffer `frag`"),
    ("T.atomic_add(Out[0:32], 1.0)", "R102", "needs a buffer or a region"),
    ("T.atomic_add(Out[0:16], sh)", "R102", "extents do not match"),
    ("T.atomic_add(Out[0])", "R102", "missing the argument `value`"),
])
def test_frontend_refuses_with_a_diagnostic(body, code, words):
    _assert_refused(body, code, words)


def _assert_refused(body: str, code: str, words: str) -> None:
    with pytest.raises(DiagnosticError) as refused:
        _func(_kernel(body))
    d = refused.value.diagnostics[0]
    assert d.code == code and words in d.message, d.message


# ----------------------------------------------------------------------------- meaning

def _chain(values: np.ndarray, start, dtype) -> float:
    """One order of the hardware: a chain of atomics, each step rounded into dtype."""
    acc = dtype.quantize(np.array([start], dtype=np.float64))
    for v in values:
        acc = dtype.quantize(acc.astype(np.float64) + float(v))
    return float(acc[0])


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32"])
def test_every_order_of_the_rounded_chain_is_within_the_bound(dtype_name):
    dtype = DTYPES[dtype_name]
    grid = 24
    source = f"""import tilelang.language as T


@T.prim_func
def main(X: T.Tensor(({grid}, 4), T.{dtype_name}), Out: T.Tensor((4,), T.{dtype_name})):
    with T.Kernel({grid}, threads=32) as bx:
        for j in T.Parallel(4):
            T.atomic_add(Out[j], X[bx, j])
"""
    rng = np.random.default_rng(7)
    x = dtype.quantize(rng.standard_normal((grid, 4)) * 3)
    out0 = dtype.quantize(rng.standard_normal(4))
    result = run(_func(source), {"X": x, "Out": out0})
    got, bound = result.outputs["Out"], result.bounds["Out"]
    assert (bound > 0).all()          # a float chain is not exact in general: bounded
    for trial in range(20):
        order = rng.permutation(grid)
        chained = np.array([_chain(x[order, j], out0[j], dtype) for j in range(4)])
        assert within_bound(chained.astype(got.dtype), got, bound).all(), (trial, chained)


def test_integers_are_exact_and_wrap_in_any_order():
    source = """import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((4, 8), T.int32), Out: T.Tensor((8,), T.int32),
         Big: T.Tensor((8,), T.int32)):
    with T.Kernel(4, threads=32) as bx:
        for j in T.Parallel(8):
            T.atomic_add(Out[j], X[bx, j])
            T.atomic_max(Big[j], X[bx, j])
"""
    x = np.array([[2**30] * 8, [2**30] * 8, [-5] * 8, [7] * 8], dtype=np.int32)
    result = run(_func(source), {"X": x, "Out": np.zeros(8, np.int32),
                                 "Big": np.full(8, -1, np.int32)})
    wrapped = np.int32(np.int64(2**31 + 2) - 2**32)
    assert (result.outputs["Out"] == wrapped).all()
    assert (result.outputs["Big"] == 2**30).all()
    assert not result.bounds["Out"].any()


def test_a_plain_store_between_atomics_starts_a_new_chain():
    source = _kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[0, j])
        for j in T.Parallel(32):
            Out[j] = 100.0
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[1, j])
        """, grid=1)
    x = np.ones((1, 32), np.float32) * np.float32(2.5)
    x = np.concatenate([x, np.full((1, 32), 4.0, np.float32)])
    source = source.replace("T.Tensor((1, 32), T.float32)", "T.Tensor((2, 32), T.float32)")
    result = run(_func(source), {"X": x, "Out": np.zeros(32, np.float32)})
    # one block: its accesses are in program order; the store is the new base
    assert (result.outputs["Out"] == 104.0).all()


def test_a_plain_store_racing_other_blocks_atomics_stops_the_run():
    """The same store in one block of eight: every order of the blocks is legal, so the
    store may land before or after any other block's contributions. Running the blocks
    one after the other meets it (interp/block_order.py) and stops with R504."""
    source = _kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[bx, j])
        if bx == 3:
            for j in T.Parallel(32):
                Out[j] = 100.0
        """, grid=8)
    with pytest.raises(DiagnosticError) as found:
        run(_func(source), {"X": np.ones((8, 32), np.float32),
                            "Out": np.zeros(32, np.float32)})
    (race,) = found.value.diagnostics
    assert race.code == "R504" and race.span.line == 13
    assert race.message.startswith("race between blocks, met in this run: block 3 stores "
                                   "Out[0], which another block updated atomically at "
                                   "line 10")
    assert race.notes[0].span.line == 10


def test_atomics_outside_a_parallel_are_one_per_thread():
    source = _kernel("T.atomic_add(Out[0], 1.0)", threads=64, grid=2)
    result = run(_func(source), {"X": np.zeros((2, 32), np.float32),
                                 "Out": np.zeros(32, np.float32)})
    assert result.outputs["Out"][0] == 128.0


# ----------------------------------------------------------------------------- lowering

REPLICATED = _kernel("""\
    for j in T.Parallel(32):
        T.atomic_add(Out[j], X[bx, j])
    """)


def test_replica_zero_issues_in_a_replicated_loop_and_the_cuda_prints_it():
    from verify_reducer.codegen.cuda import render
    physical = _plan(REPLICATED)
    ((stmt, issue),) = lowered.atomic_lowering(physical)
    assert (issue.replicas, issue.guard_replica, issue.function) == (4, 0, "atomicAdd")
    assert "by replica 0 of the loop's 4 replicas" in issue.describe()
    cuda = render(physical).source
    assert "if (rep == 0) {" in cuda and "atomicAdd(&Out[j], X[32*bx + j]);" in cuda
    from verify_reducer.codegen.lower.program import lower
    assert "| atomic: Out: each iteration issued once by replica 0" in \
        lower(physical).describe()


@pytest.mark.parametrize("op, dtype, function, operand", [
    ("atomic_add", "float16", "atomicAdd", "half"),
    ("atomic_add", "bfloat16", "atomicAdd", "__nv_bfloat16"),
    ("atomic_add", "int64", "atomicAdd", "unsigned long long"),
    ("atomic_max", "int64", "atomicMax", "long long"),
    ("atomic_min", "uint32", "atomicMin", "unsigned int"),
    ("atomic_max", "float32", None, None),
    ("atomic_add", "int8", None, None),
])
def test_the_native_instruction_per_dtype(op, dtype, function, operand):
    assert lowered._instruction(ir.ATOMIC_OPS[op], dtype) == (function, operand, None)


@pytest.mark.parametrize("op, dtype, word, subword", [
    ("atomic_max", "float32", "unsigned int", False),
    ("atomic_min", "float64", "unsigned long long", False),
    ("atomic_max", "float16", "unsigned short", False),
    ("atomic_min", "bfloat16", "unsigned short", False),
    ("atomic_add", "int16", "unsigned short", False),
    ("atomic_max", "uint16", "unsigned short", False),
    ("atomic_add", "int8", "unsigned int", True),
    ("atomic_min", "uint8", "unsigned int", True),
])
def test_no_native_instruction_is_a_cas_loop(op, dtype, word, subword):
    source = _kernel(f"""\
        for j in T.Parallel(32):
            T.{op}(Out[j], X[bx, j])
        """, out=f"(32,), T.{dtype}")
    ((_, issue),) = lowered.atomic_lowering(_plan(source))
    assert (issue.function, issue.operand_type, issue.subword) == ("atomicCAS", word, subword)
    assert "a compare-and-swap loop (atomicCAS)" in issue.describe()


def test_the_cas_loop_swaps_until_no_other_thread_changed_the_word():
    from verify_reducer.codegen.cuda import render
    cuda = render(_plan(_kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], 3)
        """, out="(32,), T.int8"))).source
    assert "reinterpret_cast<size_t>(&Out[j]) & ~(size_t)3" in cuda
    assert "const unsigned int atomic_want = (atomic_seen & ~(0xFFu << atomic_shift)) | " \
        "((unsigned int)(unsigned char)((signed char)(atomic_old + atomic_v)) << " \
        "atomic_shift);" in cuda
    assert "if (atomic_got == atomic_seen) break;" in cuda
    float_max = render(_plan(_kernel("""\
        for j in T.Parallel(32):
            T.atomic_max(Out[j], X[bx, j])
        """))).source
    assert "__float_as_uint(fmaxf(atomic_old, atomic_v))" in float_max


@pytest.mark.parametrize("out, words", [
    ("(30,), T.int8", "does not fill its last word"),
    ("(32,), T.float8_e4m3fn", "no atomic max of float8_e4m3fn"),
])
def test_what_no_instruction_or_loop_does_is_refused_by_the_renderer(out, words):
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.cuda_unsupported import Unsupported
    physical = _plan(_kernel("""\
        for j in T.Parallel(30):
            T.atomic_max(Out[j], X[bx, j])
        """, out=out))
    with pytest.raises(Unsupported, match=words):
        render(physical)


def test_memory_order_fences_and_int64_operand_are_printed():
    from verify_reducer.codegen.cuda import render
    source = _kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], 1, memory_order="acq_rel")
        """, out="(32,), T.int64", threads=32)
    cuda = render(_plan(source)).source
    assert "__threadfence();\n" in cuda
    assert "atomicAdd(reinterpret_cast<unsigned long long*>(&Out[" in cuda


# ----------------------------------------------------------------------------- faults

def _simulate(physical, seed=0):
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    return simulate(physical, prepare(physical.func, seed=seed))


def _planted(monkeypatch, **change):
    from verify_reducer.interp import sim_atomics
    real = sim_atomics.issue_of
    monkeypatch.setattr(sim_atomics, "issue_of",
                        lambda plan, stmt: dataclasses.replace(real(plan, stmt), **change))


def test_the_planned_atomics_account_exactly_once():
    assert _simulate(_plan(REPLICATED)).violations == []


def test_planted_replicated_atomic_is_r503_with_its_count(monkeypatch):
    _planted(monkeypatch, guard_replica=None)         # every replica issues: 4×
    result = _simulate(_plan(REPLICATED))
    found = [d for d in result.violations if d.code == "R503"]
    assert found, [d.message for d in result.violations]
    message = found[0].message
    assert "applied 4 times" in message and "iteration (j=0)" in message
    assert "Out[0]" in message and found[0].span.line == 10


def test_planted_guard_that_leaves_iterations_out_is_r502(monkeypatch):
    _planted(monkeypatch, guard_replica=7)            # no replica 7: nobody issues
    result = _simulate(_plan(REPLICATED))
    found = [d for d in result.violations if d.code == "R502"]
    assert found and "never applied" in found[0].message


def test_stale_read_of_an_atomically_updated_element_is_r504():
    from verify_reducer.verify.oracle import pipeline
    path = ROOT / "tests" / "programs" / "races" / "atomic_stale_read.py"
    report = pipeline.check(str(path))
    (race,) = [d for d in report.diagnostics if d.code == "R504"]
    assert "the atomic update of Out at line 15" in race.message
    assert "the read of Out at line 17" in race.message and "block" in race.message
    assert race.notes[0].span.line == 15


def test_blocks_meeting_only_through_atomics_are_independent_up_to_their_order():
    from verify_reducer.verify.oracle import blocks
    func = _func(REPLICATED)
    independence = blocks.prove_independent(func, blocks.global_accesses(func))
    assert independence.proved and independence.commuting == ("Out",)
    assert independence.to_json()["up_to_atomic_order"] == ["Out"]


def test_atomics_of_two_monoids_into_one_tensor_are_not_independent():
    from verify_reducer.verify.oracle import blocks
    func = _func(_kernel("""\
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[bx, j])
        for j in T.Parallel(32):
            T.atomic_max(Out[j], X[bx, j])
        """))
    independence = blocks.prove_independent(func, blocks.global_accesses(func))
    assert not independence.proved
    assert "atomic update of Out at line 10" in independence.reason
    assert "atomic update of Out at line 12" in independence.reason


# Split-K over a grid far too large to run: 64 row tiles × 64 column tiles × split 8,
# each block adding its partial tile into C atomically.
SPLIT_K = """\
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4096, 4096), T.float16), B: T.Tensor((4096, 4096), T.float16),
         C: T.Tensor((4096, 4096), T.float32)):
    with T.Kernel(64, 64, 8, threads=128) as (bx, by, bz):
        part = T.alloc_fragment((64, 64), T.float32)
        T.clear(part)
        for k in T.serial(8):
            for i, j in T.Parallel(64, 64):
                part[i, j] += T.cast(A[by * 64 + i, bz * 512 + k * 64 + j % 64], T.float32) * \\
                    T.cast(B[bz * 512 + k * 64 + i % 64, bx * 64 + j], T.float32)
        for i, j in T.Parallel(64, 64):
            T.atomic_add(C[by * 64 + i, bx * 64 + j], part[i, j])
"""


def test_a_split_k_grid_is_checked_from_a_sample_of_its_blocks(tmp_path):
    from verify_reducer.verify.oracle import pipeline
    path = tmp_path / "split_k.py"
    path.write_text(SPLIT_K)
    report = pipeline.check(str(path))
    assert report.exit_code == 0, [d.message for d in report.diagnostics]
    selection = report.selection
    assert selection.total == 64 * 64 * 8 and selection.independence.commuting == ("C",)
    assert selection.blocks is not None and len(selection.blocks) < 16
    assert all(not run.violations for run in report.runs)


# ----------------------------------------------------------------------------- x2 / x4

VECTOR = _kernel("""\
    for j in T.Parallel(16):
        T.atomic_addx2(Out[j * 2], X[bx, j * 2])
    """)


def test_vector_atomic_is_an_unrolled_loop_of_element_atomics():
    loop = _func(VECTOR).kernel.body[-1].body[0]
    assert isinstance(loop, ir.SerialFor) and loop.kind == "unroll"
    (lane,) = loop.body
    assert isinstance(lane, ir.AtomicUpdate) and lane.vector == 2 and lane.op == "sum"
    assert lowered.vector_lanes(loop) is lane


@pytest.mark.parametrize("dtype, lanes, function, operand", [
    ("float16", 2, "atomicAdd", "half2"),
    ("bfloat16", 2, "atomicAdd", "__nv_bfloat162"),
    ("float32", 2, "atomicAdd", "float2"),
    ("float32", 4, "atomicAdd", "float4"),
    ("float16", 4, "atom.global.add.noftz.v4.f16", "unsigned short"),
    ("bfloat16", 4, "atom.global.add.noftz.v4.bf16", "unsigned short"),
])
def test_the_vector_instruction_per_dtype(dtype, lanes, function, operand):
    from verify_reducer.spec.target import target
    assert lowered._vector_instruction(dtype, lanes, target("sm_90")) == \
        (function, operand, None)


def test_vector_atomic_prints_one_instruction_guarded_by_replica_zero():
    from verify_reducer.codegen.cuda import render
    physical = _plan(VECTOR)
    ((stmt, issue),) = lowered.atomic_lowering(physical)
    assert (issue.vector, issue.guard_replica, issue.operand_type) == (2, 0, "float2")
    cuda = render(physical).source
    assert cuda.count("atomicAdd(") == 1 and "if (rep == 0) {" in cuda
    assert "atomicAdd(reinterpret_cast<float2*>(&Out[2*j + atomic_lane]), " \
        "make_float2(atomic_lane_v0, atomic_lane_v1));" in cuda
    from verify_reducer.codegen.lower.program import lower
    assert "atomicAdd on float2 (2 lanes in one instruction; the first element's offset " \
        "a multiple of 2)" in lower(physical).describe()


def test_vector_lanes_account_each_element_exactly_once():
    from verify_reducer.verify.oracle.inputs import prepare
    physical = _plan(VECTOR)
    inputs = prepare(physical.func, seed=3)
    simulated = _simulate(physical, seed=3)
    assert simulated.violations == []
    meant = run(physical.func, inputs)
    x = np.asarray(inputs["X"], np.float64)
    want = np.asarray(inputs["Out"], np.float64) + x.sum(axis=0)   # every lane once
    assert within_bound(want.astype(np.float32), meant.outputs["Out"],
                        meant.bounds["Out"]).all()
    assert within_bound(simulated.outputs["Out"], meant.outputs["Out"],
                        meant.bounds["Out"]).all()


def test_planted_replicated_vector_atomic_is_r503(monkeypatch):
    _planted(monkeypatch, guard_replica=None)         # 16 pairs on 128 threads: 8×
    found = [d for d in _simulate(_plan(VECTOR)).violations if d.code == "R503"]
    assert found and "applied 8 times" in found[0].message
    assert "iteration (j=0, atomic_lane=0) to Out[0]" in found[0].message


def test_misaligned_vector_atomic_is_r505_naming_the_element():
    source = _kernel("""\
        for j in T.Parallel(15):
            T.atomic_addx2(Out[j * 2 + 1], X[bx, j * 2 + 1])
        """)
    found = [d for d in _simulate(_plan(source)).violations if d.code == "R505"]
    assert found, "a pair at odd offsets must be caught"
    message = found[0].message
    assert "misaligned vector atomic" in message and "from Out[1]" in message
    assert "aligned to 8 bytes" in message and found[0].span.line == 10


@pytest.mark.parametrize("body, code, words", [
    ("T.atomic_addx2(Out[0], 1.0)", "R102", "a buffer or a buffer region"),
    ("T.atomic_addx4(Out[0:2], X[bx, 0:4])", "R102", "extents (1, .., 4)"),
    ("T.atomic_addx2(sh[0], X[bx, 0])", "R100", "global memory only"),
    ("T.atomic_addx2(Out[0], frag[0])", "R100", "fragment `frag`"),
    ("T.atomic_addx2(frag[0], X[bx, 0])", "R102", "fragment buffer `frag`"),
    ("T.atomic_addx2(Out[0], X[bx, 0], memory_order='relaxed')", "R102", "memory_order"),
])
def test_vector_forms_refused_with_a_diagnostic(body, code, words):
    _assert_refused(body, code, words)


@pytest.mark.parametrize("out, src, words", [
    ("(32,), T.int32", "T.int32", "float16, bfloat16, float32 lanes only"),
    ("(32,), T.float32", "T.float16", "takes the value's bits"),
])
def test_vector_dtypes_are_tilelangs(out, src, words):
    source = "import tilelang.language as T\n\n\n" + textwrap.dedent(f"""\
        @T.prim_func
        def main(X: T.Tensor((8, 32), {src}), Out: T.Tensor({out})):
            with T.Kernel(8, threads=32) as bx:
                for j in T.Parallel(16):
                    T.atomic_addx2(Out[j * 2], X[bx, j * 2])
        """)
    with pytest.raises(DiagnosticError) as refused:
        _func(source)
    assert refused.value.diagnostics[0].code == "R102"
    assert words in refused.value.diagnostics[0].message


# ----------------------------------------------------------------------------- nvcc

@pytest.mark.nvcc
@pytest.mark.parametrize("path", ATOMIC_PROGRAMS, ids=lambda p: p.name)
def test_atomic_cuda_compiles_for_sm_90(path, tmp_path):
    """Every render of the atomic programs (the vector instructions, the CAS loops) is
    accepted by nvcc for sm_90, with no local-memory frame."""
    import subprocess
    from cuda_env import nvcc, plan, planners
    if nvcc() is None:
        pytest.skip("nvcc is not on PATH")
    from verify_reducer.codegen.cuda import render
    for planner in planners():
        unit = tmp_path / f"{planner}.cu"
        unit.write_text(render(plan(path, planner)).translation_unit())
        done = subprocess.run([nvcc(), "-arch=sm_90", "-cubin", "-fmad=false", "-Xptxas",
                               "-v", "-o", str(tmp_path / f"{planner}.cubin"), str(unit)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (planner, done.stderr[-3000:])
        assert " 0 bytes stack frame" in done.stdout + done.stderr, planner


# ----------------------------------------------------------------------------- GPU

@pytest.mark.gpu
@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("path", ATOMIC_PROGRAMS, ids=lambda p: p.name)
def test_gpu_cuda_matches_the_interpreter(path, planner):
    from cuda_env import cuda_within_the_interpreters_bound
    cuda_within_the_interpreters_bound(path, planner)
