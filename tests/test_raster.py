"""T.use_swizzle: the blocks launched panel by panel (codegen.plan_raster). The frontend
records it (or refuses bad arguments with R102 at their line), the plan applies it only
where block_indices is checked to cover the grid once, the C the renderer prints is the
same arithmetic as block_indices (compiled with the host compiler and compared), both
equal TileLang's own template transcribed here independently, and the meaning is
unchanged (the simulator and, on the GPU, the CUDA equal the interpreter)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_raster import (CHECKED_BLOCKS, block_indices, plan_raster,
                                                raster_c)
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.source import Span
from verify_reducer.verify.oracle.inputs import prepare

PROGRAM = Path(__file__).parent / "programs" / "valid" / "raster_panels.py"
KERNEL = PROGRAM.read_text()
LINE = next(n for n, text in enumerate(KERNEL.splitlines(), 1) if "T.use_swizzle(3)" in text)


def _func(swizzle: str):
    return parse_source(KERNEL.replace("T.use_swizzle(3)", swizzle), "<raster>").func()


def _tilelang(panel: int, order: str, gx: int, gy: int, x: int, y: int) -> tuple[int, int]:
    """tl_templates/cuda/threadblock_swizzle.h's rasterization2DRow / 2DColumn, as
    TileLang writes them (unsigned arithmetic), for one launched block."""
    idx = x + y * gx
    size = gx * gy
    along = gx if order == "row" else gy
    panel_size = panel * along
    offset, pidx = idx % panel_size, idx // panel_size
    total = (size + panel_size - 1) // panel_size
    stride = panel if pidx + 1 < total else (size - pidx * panel_size) // along
    flipped = along - 1 - offset // stride if pidx & 1 else offset // stride
    other = offset % stride + pidx * panel
    return (flipped, other) if order == "row" else (other, flipped)


@pytest.mark.parametrize("order", ["row", "column"])
@pytest.mark.parametrize("panel", [1, 3, 10])
@pytest.mark.parametrize("grid", [(7, 23), (16, 32), (32, 16), (5, 5), (2, 41)])
def test_block_indices_are_tilelangs_and_cover_the_grid_once(grid, panel, order):
    raster = ir.Raster(panel, order, Span(1, 1, 1, 1))
    x, y = np.meshgrid(np.arange(grid[0]), np.arange(grid[1]), indexing="ij")
    bx, by = block_indices(raster, grid, x.ravel(), y.ravel())
    want = [_tilelang(panel, order, *grid, int(a), int(b)) for a, b in zip(x.ravel(), y.ravel())]
    assert list(zip(bx.tolist(), by.tolist())) == want
    assert sorted(want) == sorted((a, b) for a in range(grid[0]) for b in range(grid[1]))


@pytest.mark.skipif(shutil.which("c++") is None, reason="no host C++ compiler")
@pytest.mark.parametrize("order", ["row", "column"])
def test_the_printed_c_is_block_indices(order, tmp_path):
    """raster_c's lines compiled on the host with blockIdx emulated: every launched
    block of a 7 x 23 grid gets block_indices's (bx, by)."""
    raster, grid = ir.Raster(3, order, Span(1, 1, 1, 1)), (7, 23)
    body = "\n".join("    " + line for line in raster_c(raster, grid, "bx", "by"))
    (tmp_path / "r.cpp").write_text(
        "#include <cstdio>\nstruct D { int x, y; };\n"
        "int main() {\n  for (int yy = 0; yy < 23; ++yy) for (int xx = 0; xx < 7; ++xx) {\n"
        "    const D blockIdx{xx, yy};\n" + body + "\n"
        '    std::printf("%d %d\\n", bx, by);\n  }\n}\n')
    subprocess.run(["c++", "-o", str(tmp_path / "r"), str(tmp_path / "r.cpp")], check=True)
    printed = subprocess.run([str(tmp_path / "r")], check=True, capture_output=True,
                             text=True).stdout.split()
    x, y = np.meshgrid(np.arange(7), np.arange(23), indexing="xy")
    bx, by = block_indices(raster, grid, x.ravel(), y.ravel())
    assert list(map(int, printed)) == [v for pair in zip(bx, by) for v in pair]


def test_the_plan_applies_it_and_the_kernel_computes_the_block_indices_from_the_launch():
    plan = plan_func(_func("T.use_swizzle(3)"), "auto")
    assert (plan.raster.panel, plan.raster.order, plan.raster.span.line) == (3, "row", LINE)
    assert f"blocks launched in panels of 3 rows of the grid (T.use_swizzle at line {LINE}" \
        in format_plan(plan)
    assert plan_json(plan)["raster"] == {"applied": {"order": "row", "panel": 3, "line": LINE},
                                         "why": ""}
    cuda = render(plan).source
    assert "const int raster_launch = blockIdx.x + blockIdx.y * 7;" in cuda
    assert "const int bx = blockIdx.x;" not in cuda
    inputs = prepare(plan.func, seed=0)
    sim = simulate(plan, inputs)
    reference = run(plan.func, inputs)
    assert sim.violations == []
    assert within_bound(sim.outputs["Y"], reference.outputs["Y"], reference.bounds["Y"]).all()


@pytest.mark.parametrize("swizzle, why", [
    ('T.use_swizzle(4, order="mlx")', "the mlx order is not generated"),
    ("T.use_swizzle(3, enable=False)", ""),
    ("", ""),
])
def test_launch_order_where_it_is_not_applied(swizzle, why):
    plan = plan_func(_func(swizzle or "pass"), "auto")
    assert plan.raster is None and why in plan.raster_why and bool(why) == bool(plan.raster_why)
    assert "const int bx = blockIdx.x;" in render(plan).source


def test_a_grid_of_one_row_or_past_the_checked_size_runs_in_launch_order():
    one_row = _func("T.use_swizzle(3)").kernel
    kernel = ir.Kernel((7, 1), one_row.threads, one_row.block_vars, one_row.body,
                       one_row.span, one_row.raster)
    assert plan_raster(kernel) == (None, f"T.use_swizzle at line {LINE}: a grid of one row or "
                                         "column has one order")
    big = ir.Kernel((1 << 11, (CHECKED_BLOCKS >> 11) + 1), one_row.threads,
                    one_row.block_vars, one_row.body, one_row.span, one_row.raster)
    raster, why = plan_raster(big)
    assert raster is None and f"at most {CHECKED_BLOCKS} blocks" in why


@pytest.mark.parametrize("swizzle, message", [
    ('T.use_swizzle(3, order="diagonal")', "order must be one of row, column, mlx"),
    ("T.use_swizzle(0)", "panel_size must be positive"),
    ("T.use_swizzle(bx)", "panel_size"),
    ("T.use_swizzle(3, enable=bx > 1)", "`enable` must be a constant bool"),
    ("T.use_swizzle(3)\n        T.use_swizzle(4)", "T.use_swizzle is given twice"),
])
def test_bad_arguments_are_r102_at_their_line(swizzle, message):
    with pytest.raises(DiagnosticError) as raised:
        _func(swizzle)
    [d] = raised.value.diagnostics
    assert d.code == "R102" and message in d.message, d.message
    assert d.span.line == (LINE + 1 if "twice" in message else LINE)


@pytest.mark.gpu
@pytest.mark.parametrize("swizzle", ["T.use_swizzle(3)", 'T.use_swizzle(4, order="column")'])
def test_gpu_every_block_index_is_taken_once(swizzle, tmp_path):
    """Y depends on each block's indices: a block index taken twice or never leaves
    elements of Y wrong or unwritten."""
    path = tmp_path / "raster.py"
    path.write_text(KERNEL.replace("T.use_swizzle(3)", swizzle))
    from cuda_env import cuda_within_the_interpreters_bound
    cuda_within_the_interpreters_bound(path, "canonical")
