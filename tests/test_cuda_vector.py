"""128-bit copies: taken where the layout and the addresses allow it, and only there.

- the cooperative partition of a global/shared copy is plan data (LayoutMap.copies):
  runs of 16 bytes per thread where the regions allow, the default partition otherwise;
- the renderer turns a run into one float4/uint4 access only when every address is
  provably 16-byte aligned (codegen.cuda_vector); rows of 3 floats or a start at element
  1 stay scalar."""
from __future__ import annotations

import pytest

from cuda_env import ROOT, load, plan, planners
from verify_reducer.codegen.lower.copies import multiple_of, runs_of
from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.layout_copy import run_partition
from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import Var
from verify_reducer.spec.layout import default_partition

VALID = ROOT / "tests" / "programs" / "valid"
VECTOR = "reinterpret_cast<const {}*>"


def cuda(path, planner="canonical") -> str:
    from verify_reducer.codegen.cuda import render
    return render(plan(path, planner)).source


def copies(path) -> dict[tuple[str, str], object]:
    func = load(path)
    layouts = infer_layouts(func)
    return {(c.src.buffer.name, c.dst.buffer.name): layout
            for c, layout in layouts.copies.items()}


@pytest.mark.parametrize("planner", planners())
def test_float32_staged_gemv_uses_float4(planner):
    """The T.Pipelined loop stages A and x through cp.async of 16 bytes (the runs the
    vector rules prove aligned); the fragment reads the iteration's stage."""
    source = cuda(VALID / "gemv_shared_vector.py", planner)
    assert "reducer_cp_async16(&A_shared[A_shared_fill + " in source
    assert "reducer_cp_async16(&x_shared[x_shared_fill + " in source
    assert "A_frag[0] = A_shared[A_shared_stage + 8*i + j];" in source
    assert "__shared__ __align__(16) float A_shared[64];" in source     # two stages


def test_float32_plain_loop_uses_float4(tmp_path):
    """The same kernel with one stage (a plain loop): 128-bit loads and stores."""
    text = (VALID / "gemv_shared_vector.py").read_text()
    path = tmp_path / "one_stage.py"
    path.write_text(text.replace("num_stages=2", "num_stages=1"))
    source = cuda(path)
    assert "const float4 run = *reinterpret_cast<const float4*>(&A[" in source
    assert "*reinterpret_cast<float4*>(&A_shared[" in source
    assert "*reinterpret_cast<const float4*>(&x[" in source
    assert "__shared__ __align__(16) float A_shared[32];" in source


def test_float16_staged_gemv_uses_uint4():
    source = cuda(ROOT / "examples" / "gemv_pipelined.py")
    assert "reducer_cp_async16(&A_shared[A_shared_fill + " in source
    assert "*reinterpret_cast<const uint4*>(&A_shared[A_shared_stage + " in source
    # the x tile, staged through the plan's own buffer: cp.async in, one uint4 out
    assert "reducer_cp_async16(&x_frag_stage[x_frag_stage_fill + " in source
    assert "*reinterpret_cast<const uint4*>(&x_frag_stage[x_frag_stage_stage + " in source


def test_unaligned_rows_stay_scalar():
    source = cuda(VALID / "rows_of_three.py")
    assert "float4" not in source and "uint4" not in source
    # the copy of x[1:9] is partitioned in runs, but they start at element 1 and 5
    layout = copies(VALID / "rows_of_three.py")[("x", "x_shared")]
    assert layout.describe().startswith("thread = i // 4, slot = i % 4")


def test_cooperative_partitions_are_plan_data():
    found = copies(VALID / "gemv_shared_vector.py")
    assert found[("A", "A_shared")] == run_partition((4, 8), 4, 32)
    assert found[("x", "x_shared")] == run_partition((8,), 4, 32)
    # rows of 3 floats: no run of 4 fits; the default partition
    assert copies(VALID / "rows_of_three.py")[("A", "A_shared")] == \
        default_partition((4, 3), 32)


def test_run_partition_gives_every_thread_runs():
    layout = run_partition((4, 64), 8, 16)
    assert layout.is_injective()
    runs = runs_of(layout, 8)
    assert runs is not None and runs.shape == (4, 8)
    assert runs_of(default_partition((4, 64), 16), 8) is None


def test_alignment_is_decided_exactly():
    bx, ko, i = Var("bx"), Var("ko"), Var("i")
    ranges = {"bx": (0, 3), "ko": (0, 7), "i": (0, 31)}
    assert multiple_of(bx * 16384 + i * 512 + ko * 64, 8, ranges)
    assert not multiple_of(i * 3, 4, ranges)
    assert not multiple_of(ko * 8 + 1, 4, ranges)
    assert multiple_of(bx * 2, 4, {"bx": (0, 0)})        # only bx = 0 occurs
    assert not multiple_of(Var("n") * 2, 4, {})           # no range: any value


def test_copy_layouts_cover_every_cooperative_copy():
    for path in sorted(ROOT.glob("examples/*.py")) + sorted(VALID.glob("*.py")):
        func = load(path)
        layouts = infer_layouts(func)
        for stmt in ir.walk(func.kernel.body):
            if isinstance(stmt, ir.Copy) and not stmt.src.buffer.is_reducer and \
                    not stmt.dst.buffer.is_reducer and \
                    "local" not in (stmt.src.buffer.scope, stmt.dst.buffer.scope):
                assert stmt in layouts.copies, f"{path.name}: line {stmt.span.line}"


def test_fragment_runs_use_float4():
    source = cuda(VALID / "replicated_fragment_vector.py")
    assert "const float4 run = *reinterpret_cast<const float4*>(&x[4*i_run]);" in source
    assert "x_frag[4*slot + lane] = run_elements[lane];" in source
    assert "*reinterpret_cast<float4*>(&y[4*i_run]) = run;" in source
