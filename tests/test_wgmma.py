"""Hopper's wgmma (issue 28): the swizzled shared layout, the matrix descriptors, the
accumulator registers, the plan that chooses them, the simulator that executes them
(planted faults caught before any GPU), the CUDA that prints them, and the GPU runs."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.lower import gemm as lowered
from verify_reducer.codegen.lower import wgmma
from verify_reducer.spec import ir
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.target import target as target_named

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
UPSTREAM_GEMM = ROOT / "tests" / "upstream" / "gemm.py"
SM90 = target_named("sm_90")


def _program(m=64, n=64, k=32, dtype="float16", transpose_a=False, transpose_b=False,
             threads=128, stages=0, clear=False) -> str:
    a = f"({k}, {m})" if transpose_a else f"({m}, {k})"
    b = f"({n}, {k})" if transpose_b else f"({k}, {n})"
    copy_a = f"T.copy(A[0:{k}, 0:{m}], a_s)" if transpose_a else f"T.copy(A[0:{m}, 0:{k}], a_s)"
    copy_b = f"T.copy(B[0:{n}, 0:{k}], b_s)" if transpose_b else f"T.copy(B[0:{k}, 0:{n}], b_s)"
    flags = f"transpose_A={transpose_a}, transpose_B={transpose_b}, clear_accum={clear}"
    body = f"""\
        {copy_a}
        {copy_b}
        T.gemm(a_s, b_s, acc, {flags})
        T.copy(acc, C)"""
    return "import tilelang.language as T\n\n\n" + textwrap.dedent(f"""\
        @T.prim_func
        def main(A: T.Tensor({a}, T.{dtype}), B: T.Tensor({b}, T.{dtype}),
                 C: T.Tensor(({m}, {n}), T.float32)):
            with T.Kernel(1, threads={threads}) as bx:
                a_s = T.alloc_shared({a}, T.{dtype})
                b_s = T.alloc_shared({b}, T.{dtype})
                acc = T.alloc_fragment(({m}, {n}), T.float32)
                T.fill(acc, 0)
        """) + textwrap.indent(textwrap.dedent(body), " " * 8) + "\n"


def _plan(source: str, target: str = "sm_90", planner: str = "canonical"):
    from verify_reducer.codegen.plan import plan_func
    return plan_func(parse_source(source, "wgmma_case.py").func(), planner, target=target)


def _gemm(plan) -> ir.Gemm:
    return next(s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.Gemm))


CASES = [dict(), dict(transpose_b=True), dict(transpose_a=True),
         dict(transpose_a=True, transpose_b=True), dict(dtype="bfloat16"),
         dict(m=128, n=128, k=32), dict(m=128, n=256, k=64, threads=256),
         dict(m=64, n=192, k=16), dict(m=64, n=512, k=16), dict(m=64, n=32, k=64),
         dict(m=64, n=24, k=16, transpose_b=True), dict(m=192, n=64, k=128, threads=384)]


# ----------------------------------------------------------------------------- layout

@pytest.mark.parametrize("rows, cols, element", [(128, 32, 2), (32, 128, 2), (64, 64, 2),
                                                 (8, 16, 2), (16, 256, 2), (64, 48, 2),
                                                 (8, 64, 1), (16, 32, 4)])
def test_swizzle_is_a_bijection_of_the_stage_and_keeps_16_byte_units(rows, cols, element):
    dtype = {1: "int8", 2: "float16", 4: "float32"}[element]
    swz = wgmma.swizzle_of(_buffer((rows, cols), dtype))
    assert swz is not None and (cols * element) % swz.width == 0
    flat = np.arange(rows * cols)
    byte = swz.physical(flat)
    assert sorted(byte.tolist()) == list(range(0, rows * cols * element, element))
    assert np.array_equal(swz.logical(byte), flat)
    # a 16-byte run aligned to 16 bytes stays one contiguous 16-byte unit
    per_unit = 16 // element
    runs = byte.reshape(-1, per_unit)
    assert np.all(runs[:, 1:] - runs[:, :-1] == element) and np.all(runs[:, 0] % 16 == 0)
    # the XOR reads bits up to 7 + b: a stage of whole 8-row periods
    assert (rows * cols * element) % swz.align == 0


def _buffer(shape, dtype, scope="shared"):
    from verify_reducer.spec.source import Span
    return ir.Buffer("s", shape, _dtype(dtype), scope, Span(1, 0, 1, 0))


def _dtype(name):
    from verify_reducer.spec.dtypes import DTYPES
    return DTYPES[name]


def test_rows_that_cannot_be_swizzled_have_no_swizzle():
    for shape, dtype in (((64, 8), "float16"), ((4, 64), "float16"), ((64, 20), "float16"),
                         ((8, 64, 2), "float16")):
        assert wgmma.swizzle_of(_buffer(shape, dtype)) is None
    assert wgmma.swizzle_of(_buffer((64, 64), "float16", "fragment")) is None


def test_the_c_swizzle_is_the_same_function_in_element_units():
    """reducer_swizzle(e, right, mask, left) of the runtime header, evaluated here as C
    evaluates it, equals Swizzle.physical / element for every element."""
    for cols in (32, 64, 128, 256):
        swz = wgmma.swizzle_of(_buffer((64, cols), "float16"))
        flat = np.arange(64 * cols)
        chunked = swz.chunked(flat // cols, flat % cols)
        right, left = swz.c_shift()
        c = chunked ^ (((chunked >> right) & swz.mask) << left)
        assert np.array_equal(c * swz.element, swz.physical(flat))


# ----------------------------------------------------------------------------- descriptors

@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
                         or "64x64x32")
def test_every_descriptor_element_is_the_operand_element_the_gemm_names(case):
    """For every warpgroup, instruction tile, N block and k step, the byte each
    descriptor gives element (x, y) of its tile (the canonical layout), swizzled as the
    mode swizzles it, holds the logical element A[row0 + x, k0 + y] (B[k0 + y, col0 +
    x]) the gemm multiplies there."""
    plan = _plan(_program(**case))
    stmt = _gemm(plan)
    low = lowered.lower_gemm(plan, stmt)
    assert low.wgmma is not None, low.describe()
    w = low.wgmma
    m, n, k = stmt.mnk
    groups = low.participants[1] // wgmma.WARPGROUP
    warps = low.participants[1] // 32
    for g in range(groups):
        for ks in range(w.steps):
            for tile in range(w.tiles):
                for nb in range(w.nblocks):
                    env = {wgmma.GROUP: g, wgmma.TILE: tile, wgmma.NBLOCK: nb, wgmma.STEP: ks}
                    x, y = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
                    row = tile * 16 * warps + g * 64 + x
                    kk = ks * 16 + y
                    want = kk * m + row if stmt.transpose_a else row * k + kk
                    got = _decoded(w.a, env, x, y)
                    assert np.array_equal(got, want), (g, ks, tile)
                    x, y = np.meshgrid(np.arange(w.instr_n), np.arange(16), indexing="ij")
                    col = nb * w.instr_n + x
                    want = col * k + kk[:1, :] if stmt.transpose_b else \
                        (ks * 16 + y) * n + col
                    assert np.array_equal(_decoded(w.b, env, x, y), want), (g, ks, nb)


def _decoded(op: wgmma.WgmmaOperand, env, x, y):
    byte = op.byte(op.start(env), x, y)
    return op.swizzle.logical(op.swizzle.swizzle(byte))


def test_the_upstream_gemm_gets_tilelangs_own_descriptors():
    """TileLang 0.1.15's kernel for examples/gemm (128×128×32, 128 threads, sm_90)
    initializes its descriptors as initialize_wgmma_descriptor<2, 1, 32> for A (64B
    swizzle, LBO 16, SBO 512 bytes) and <1, 256, 64> for B (128B swizzle, LBO 4096, SBO
    1024 bytes), and issues two m64n128k16 per k step (tl::wgmma_ss<..., 64, 128, 16,
    false, true, ...>: A K-major, B MN-major) — read off its generated CUDA on the H200
    (docs/gpu-runs/2026-12-04-wgmma.log). Ours, from the same file, is the same."""
    from benchmarks.corpus_kernel import Call, CorpusKernel
    kernel = CorpusKernel("gemm", "matmul")
    call = Call(kwargs=(("M", 256), ("N", 256), ("K", 256), ("block_M", 128),
                        ("block_N", 128), ("block_K", 32)))
    plan = kernel.plan(call)["canonical"].plan
    w = lowered.lower_gemm(plan, _gemm(plan)).wgmma
    assert (w.instr_n, w.tiles, w.nblocks, w.steps) == (128, 2, 1, 2)
    assert wgmma.descriptor_fields(w.a) == (1, 32, 2) and w.a.major == "K"
    assert wgmma.descriptor_fields(w.b) == (256, 64, 1) and w.b.major == "MN"


# ----------------------------------------------------------------------------- the plan

@pytest.mark.parametrize("source, target, why", [
    (_program(), "sm_80", "sm_80 has no wgmma"),
    (_program(m=32), "sm_90", "not whole m64nNk16 tiles"),
    (_program(threads=64), "sm_90", "not whole warpgroups"),
    (_program(m=64, n=64, k=8), "sm_90", "not whole m64nNk16"),
])
def test_a_gemm_that_does_not_fit_runs_as_mma_sync_and_says_why(source, target, why):
    plan = _plan(source, target)
    stmt = _gemm(plan)
    assert why in wgmma.wgmma_refusal(stmt, target_named(target),
                                      plan.layouts.participants[stmt])
    low = lowered.lower_gemm(plan, stmt)
    assert low.wgmma is None and plan.swizzles == ()


def test_refusals_name_dtypes_scopes_and_policies():
    stmt = _gemm_of(_plan(_program()).func)                  # 64×64×32, fits on 128
    assert wgmma.wgmma_refusal(stmt, SM90, (0, 128)) == ""

    def with_buffers(**shapes_and_more):
        return dataclasses.replace(stmt, **{
            name: dataclasses.replace(getattr(stmt, name), **change)
            for name, change in shapes_and_more.items()})
    cases = {
        "float16/bfloat16 operands into a float32": with_buffers(c={"dtype": _dtype("float16")}),
        "reads B from shared memory": with_buffers(b={"scope": "fragment"}),
        # B's rows of 8 float16 are 16 bytes: no swizzle mode takes them
        "b_s's rows cannot be swizzled": with_buffers(a={"shape": (64, 16)},
                                                      b={"shape": (16, 8)},
                                                      c={"shape": (64, 8)}),
        "not whole warpgroups": stmt,
    }
    for words, changed in cases.items():
        threads = (0, 64) if words == "not whole warpgroups" else (0, 128)
        assert words in wgmma.wgmma_refusal(changed, SM90, threads), words
    # two warpgroups: FullCol would split N, wgmma here splits M
    tall = _gemm_of(_plan(_program(m=128, n=64, k=32, threads=256)).func)
    assert wgmma.wgmma_refusal(tall, SM90, (0, 256)) == ""
    assert "FullCol" in wgmma.wgmma_refusal(dataclasses.replace(tall, policy="FullCol"),
                                            SM90, (0, 256))
    # one warpgroup: every policy's split is the warpgroup's four warps along M
    assert wgmma.wgmma_refusal(dataclasses.replace(stmt, policy="FullCol"), SM90,
                               (0, 128)) == ""


def _gemm_of(func) -> ir.Gemm:
    return next(s for s in ir.walk(func.kernel.body) if isinstance(s, ir.Gemm))


def test_the_accumulator_splits_warps_along_m_on_sm90_and_as_tilelang_elsewhere():
    source = _program(m=128, n=128, k=32)
    on90, on80 = _plan(source, "sm_90"), _plan(source, "sm_80")
    assert on90.layouts.gemm_splits[_gemm(on90)] == (4, 1)
    assert on80.layouts.gemm_splits[_gemm(on80)] == (2, 2)      # TileLang's Square split
    assert {b.name for b, _ in on90.swizzles} == {"a_s", "b_s"} and on90.pitches == ()
    assert on80.swizzles == () and {b.name for b, _ in on80.pitches} == {"a_s", "b_s"}


def test_a_buffer_an_mma_gemm_reads_is_not_swizzled():
    """b_s read by a gemm that fits wgmma and by one that does not (32 rows: no 64-row
    instruction tile): b_s keeps the padded rows the mma's ldmatrix reads, and the first
    gemm runs as mma.sync too (its operand is not swizzled)."""
    source = _program().replace("T.copy(acc, C)", textwrap.dedent("""\
        a2 = T.alloc_shared((32, 32), T.float16)
                acc2 = T.alloc_fragment((32, 64), T.float32)
                T.fill(a2, 1)
                T.fill(acc2, 0)
                T.gemm(a2, b_s, acc2)
                T.copy(acc, C)"""))
    plan = _plan(source)
    assert plan.swizzles == ()
    gemms = [s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.Gemm)]
    assert len(gemms) == 2
    for stmt in gemms:
        assert lowered.lower_gemm(plan, stmt).wgmma is None


def test_a_fragment_a_runs_as_wgmma_from_registers():
    """gemm_fragment_a: A in a fragment (TileLang's wgmma_rs) — its registers are the
    mma's A fragment per warp, in the slots A's layout keeps (the simulator checks every
    one), B swizzled alone."""
    from verify_reducer.codegen.cuda import render
    plan = _plan((VALID / "gemm_fragment_a.py").read_text())
    forms = [lowered.lower_gemm(plan, s).wgmma for s in ir.walk(plan.func.kernel.body)
             if isinstance(s, ir.Gemm)]
    rs = [w for w in forms if w is not None and w.registers_a]
    assert rs and all(w.a.buffer.scope == "fragment" for w in rs)
    assert all(plan.swizzle(w.a.buffer) is None and plan.swizzle(w.b.buffer) is not None
               for w in rs)
    text = render(plan).source
    assert "k16.f32.f16.f16 \"\n" in text or "_rs_" in text
    assert "reducer_wgmma_operand(gemm_a[gemm_s]);" in text


def test_swizzled_stages_start_on_the_swizzle_period():
    from benchmarks.corpus_kernel import Call, CorpusKernel
    call = Call(kwargs=(("M", 256), ("N", 256), ("K", 256), ("block_M", 128),
                        ("block_N", 128), ("block_K", 32)))
    plan = CorpusKernel("gemm", "matmul").plan(call)["fast"].plan
    for array in plan.resources.shared:
        swz = plan.swizzle(array.owner)
        if swz is not None:
            assert array.offset % swz.align == 0
            assert (array.bytes // plan.stages_of(array.owner)) % swz.align == 0


# ----------------------------------------------------------------------------- simulator

def _check(source: str, folder: Path, monkeypatch=None, plant=None):
    from verify_reducer.verify.oracle import pipeline
    path = folder / "wgmma_case.py"
    path.write_text(source)
    if plant is not None:
        real = lowered.lower_gemm

        def planted(plan, stmt, target=None):
            low = real(plan, stmt, target)
            return low if low.wgmma is None else \
                dataclasses.replace(low, wgmma=plant(low.wgmma))
        monkeypatch.setattr(lowered, "lower_gemm", planted)
    return pipeline.check(str(path))


@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "64x64x32")
def test_simulated_wgmma_equals_the_interpreter(case, tmp_path):
    report = _check(_program(**case), tmp_path)
    assert report.exit_code == 0, report.comparisons


@pytest.mark.parametrize("fault", [
    lambda w: dataclasses.replace(w, a=dataclasses.replace(w.a, sbo=w.a.sbo * 2)),
    lambda w: dataclasses.replace(w, b=dataclasses.replace(w.b, lbo=w.b.lbo // 2)),
    lambda w: dataclasses.replace(w, b=dataclasses.replace(w.b, major="K")),
], ids=["A's SBO doubled", "B's LBO halved", "B read K-major"])
def test_planted_wrong_descriptor_computes_a_wrong_value_the_check_refutes(monkeypatch,
                                                                          fault, tmp_path):
    """A stride byte offset doubled, a leading one halved, B read K-major: the
    simulator reads the elements those descriptors name, C is not A·B, and the check
    says which element (the interpreter's reference against the simulator's value)."""
    report = _check(_program(m=64, n=128, k=32), tmp_path, monkeypatch, fault)
    wrong = [c for label, cs in report.comparisons.items() for c in cs
             if label != "interp" and not c.ok]
    assert report.exit_code != 0 and wrong and wrong[0].name == "C"
    assert wrong[0].got != wrong[0].expected


def test_planted_wrong_accumulator_register_is_caught(monkeypatch):
    """Registers 0 and 1 of every instruction named by each other's slot: the CUDA
    would write C's element into a slot the layout keeps another in (R300)."""
    real = wgmma.Wgmma.c_slot
    monkeypatch.setattr(wgmma.Wgmma, "c_slot", lambda self, tile, nblock, reg:
                        real(self, tile, nblock, reg + 1 - (reg % 2) * 2))
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    plan = _plan(_program())
    result = simulate(plan, prepare(plan.func, seed=0))
    found = [d for d in result.violations if "mma writes slot" in d.message]
    assert found and found[0].code == "R300", [d.message for d in result.violations]


def test_a_missing_barrier_before_the_wgmma_is_a_race(monkeypatch):
    """The copy's barrier after it dropped from the plan: the wgmma's reads (charged to
    the warpgroup's threads) race with the other threads' writes (R504)."""
    from verify_reducer.codegen import plan as plan_mod
    from verify_reducer.spec.physical import BodyBarriers
    real = plan_mod.plan_barriers

    def without(plan):
        found = real(plan)
        return BodyBarriers(tuple(b for b in found.items
                                  if not (isinstance(b.stmt, ir.Copy) and b.where == "after"
                                          and b.stmt.dst.buffer.name == "b_s")))
    monkeypatch.setattr(plan_mod, "plan_barriers", without)
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    plan = _plan(_program())
    result = simulate(plan, prepare(plan.func, seed=0))
    assert any(d.code == "R504" for d in result.violations), \
        [d.message for d in result.violations]


# ----------------------------------------------------------------------------- CUDA

def test_the_cuda_issues_wgmma_on_swizzled_stages_and_fences_the_async_proxy():
    from verify_reducer.codegen.cuda import compile_arch, render
    plan = _plan(_program(m=128, n=128, k=32))
    cuda = render(plan)
    text = cuda.source
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in text
    assert "reducer_wgmma_desc(&a_s[" in text and "reducer_wgmma_wait_all();" in text
    assert "reducer_swizzle(" in text                      # the copies' addresses
    assert "reducer_fence_async_proxy(); __syncthreads();" in text
    assert compile_arch("sm_90", cuda.translation_unit()) == "sm_90a"
    assert "for sm_90a (it issues wgmma)." in text         # the launch comment says so
    assert compile_arch("sm_80", cuda.translation_unit()) == "sm_80"
    mma = render(_plan(_program(m=128, n=128, k=32), "sm_80")).source
    assert "wgmma" not in mma.split("extern \"C\"")[1] and "fence_async_proxy();" not in mma


def test_wgmma_kernels_compile_for_sm90a_with_the_plans_resources():
    """nvcc for sm_90a (the wgmma functions refuse plain sm_90 with an #error), ptxas's
    figures under sm_90's name, the shared memory the plan's resources count."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.ptxas import PtxasUnavailable, compile_figures
    plan = _plan(_program(m=128, n=128, k=32, transpose_b=True))
    try:
        figures = compile_figures(render(plan).translation_unit(), "sm_90")
    except PtxasUnavailable as exc:
        pytest.skip(str(exc))
    (found,) = figures.values()
    assert found.arch == "sm_90" and found.spill_stores == 0
    assert found.shared_bytes == plan.resources.shared_bytes


# ----------------------------------------------------------------------------- GPU

GPU_CASES = CASES + [dict(m=128, n=128, k=64, clear=True),
                     dict(m=64, n=64, k=32, dtype="bfloat16", transpose_a=True)]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "64x64x32")
@pytest.mark.parametrize("planner", ["canonical", "fast"])
def test_gpu_wgmma_equals_the_interpreter(case, planner, tmp_path):
    """Every case on the H200 (wgmma, sm_90a) within the interpreter's bound."""
    from cuda_env import cuda_within_the_interpreters_bound
    path = tmp_path / "wgmma_case.py"
    path.write_text(_program(**case))
    plan = _plan(path.read_text())
    assert lowered.lower_gemm(plan, _gemm(plan)).wgmma is not None
    cuda_within_the_interpreters_bound(path, planner)


def test_planted_wrong_register_of_a_is_caught(monkeypatch):
    """The register form's A elements 0 and 1 (the two k of a register) read from each
    other's slot: the CUDA would pack another element than the layout keeps there
    (R300, before any GPU runs it)."""
    real = lowered._wgmma_registers

    def planted(stmt, m, k, wm):
        regs = real(stmt, m, k, wm)
        r = wgmma.Var(wgmma.REG)
        return dataclasses.replace(regs, slot=regs.slot + 1 - (r % 2) * 2)
    monkeypatch.setattr(lowered, "_wgmma_registers", planted)
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    plan = _plan((VALID / "gemm_fragment_a.py").read_text())
    result = simulate(plan, prepare(plan.func, seed=0))
    found = [d for d in result.violations if "mma reads slot" in d.message]
    assert found and found[0].code == "R300", [d.message for d in result.violations]


def test_a_plan_that_issues_wgmma_is_refused_on_a_device_without_it():
    """sm_90's wgmma plan on a B200 (sm_100: no wgmma) is refused by name; the same
    program planned without a wgmma gemm runs there."""
    from verify_reducer.codegen import runner

    class Device:
        def __init__(self, capability):
            self.capability = capability

        def compute_capability(self):
            return self.capability

    class Driver:
        class Context:
            device = None

            @classmethod
            def get_device(cls):
                return cls.device
    Driver.Context.device = Device((10, 0))
    with pytest.raises(runner.CudaUnavailable, match="which lacks wgmma"):
        runner._refuse_other_device(_plan(_program()), Driver)
    runner._refuse_other_device(_plan(_program(m=32)), Driver)


def test_the_plan_says_its_swizzles_and_async_proxy_fences_and_follows_the_schema():
    """`emit --what plan`: the swizzled operands (text and JSON) and the barriers that
    fence the async proxy; the JSON validates against emit.schema.json's plan."""
    import json
    pytest.importorskip("jsonschema")
    from verify_reducer.codegen.plan_text import format_plan, plan_json
    from verify_reducer.json_schemas import validator
    plan = _plan(_program(m=128, n=128, k=32))
    text = format_plan(plan)
    assert "shared operands swizzled for wgmma" in text and "a_s 64B swizzle" in text
    assert "fence.proxy.async, __syncthreads" in text
    doc = json.loads(json.dumps(plan_json(plan)))
    assert {(s["buffer"], s["width"], s["chunks"]) for s in doc["swizzles"]} == \
        {("a_s", 64, 1), ("b_s", 128, 2)}
    assert doc["barriers"] and all(b["async_proxy"] for b in doc["barriers"])
    validator("emit.schema.json#/$defs/plan").validate(doc)
    mma = json.loads(json.dumps(plan_json(_plan(_program(m=128, n=128, k=32), "sm_80"))))
    assert mma["swizzles"] == [] and not any(b["async_proxy"] for b in mma["barriers"])


REGISTER_CASES = [(64, 64, 128), (128, 64, 256), (128, 128, 128)]


def _registers_program(m: int, n: int, threads: int) -> str:
    """A copied from shared memory into a fragment, then T.gemm(f, b_s, acc)."""
    source = _program(m=m, n=n, k=32, threads=threads).replace(
        "T.gemm(a_s, b_s, acc,", "T.gemm(f, b_s, acc,").replace(
        "        T.fill(acc, 0)\n", f"        T.fill(acc, 0)\n"
        f"        f = T.alloc_fragment(({m}, 32), T.float16)\n")
    return source.replace("        T.gemm(f, b_s, acc,", "        T.copy(a_s, f)\n"
                          "        T.gemm(f, b_s, acc,")


@pytest.mark.parametrize("m, n, threads", REGISTER_CASES)
def test_a_from_registers_over_warpgroups_equals_the_interpreter(m, n, threads, tmp_path):
    """The register form with one and two warpgroups and two M tiles a warpgroup: each
    warp's rows of each tile read from the slots A's layout keeps them in, simulated
    against the interpreter."""
    source = _registers_program(m, n, threads)
    plan = _plan(source)
    low = lowered.lower_gemm(plan, _gemm(plan))
    assert low.wgmma is not None and low.wgmma.registers_a, low.describe()
    report = _check(source, tmp_path)
    assert report.exit_code == 0, report.comparisons


@pytest.mark.parametrize("m, n, threads", REGISTER_CASES)
def test_a_from_registers_is_packed_before_the_fence_so_ptxas_inserts_no_arrive(m, n,
                                                                                threads):
    """Every A register is written before wgmma.fence: ptxas then has no register of a
    wgmma written after the fence, so it adds no warpgroup.arrive of its own (its note
    C7519, which serialized attention's P·V), and nvcc warns of no unused name."""
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.ptxas import PtxasUnavailable, compile_log
    unit = render(_plan(_registers_program(m, n, threads))).translation_unit()
    kernel = unit.split('extern "C"')[1]
    assert kernel.index("reducer_pack16") < kernel.index("reducer_wgmma_fence();")
    try:
        log = compile_log(unit, "sm_90")
    except PtxasUnavailable as exc:
        pytest.skip(str(exc))
    assert "C7519" not in log and "spill" in log
    # every name the gemm declares is used or declared maybe unused: nvcc says nothing
    assert "warning" not in log, log


@pytest.mark.gpu
@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("m, n, threads", REGISTER_CASES)
def test_gpu_a_from_registers_equals_the_interpreter(m, n, threads, planner, tmp_path):
    """The register form's cases on the H200 within the interpreter's bound."""
    from cuda_env import cuda_within_the_interpreters_bound
    path = tmp_path / "wgmma_registers.py"
    path.write_text(_registers_program(m, n, threads))
    cuda_within_the_interpreters_bound(path, planner)
