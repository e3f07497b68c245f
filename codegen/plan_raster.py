"""The launch order of a kernel's blocks (T.use_swizzle): plan data.

    plan_raster(kernel) -> (the ir.Raster the plan applies or None, why not)
    block_indices(raster, grid, x, y) -> (bx, by) of the launched blocks (x, y)
    raster_c(raster, grid) -> the C lines that declare bx and by

TileLang's `T.use_swizzle(panel_size, order)` launches the grid panel by panel
(tl_templates/cuda/threadblock_swizzle.h): with order "row", the launch index
L = x + y·gx is cut into panels of panel_size rows of the grid; within a panel, launch
blocks go down a column of the panel first, and every other panel runs its columns
right to left, so that the blocks in flight share few rows of A and few columns of B
and L2 keeps them (measured on the H200: a 4096³ GEMM at 128×256 tiles, 1.5 % faster).
Order "column" is the same with the grid's axes exchanged. The last panel has the rows
that are left.

The order changes which block indices a launched block takes, never what the program
means: blocks are independent, or verify.oracle proves what they share. What must hold
is that every block index is taken exactly once: block_indices (the same arithmetic the
C does, in numpy) is checked to be a bijection of the grid before the plan applies it,
over grids up to CHECKED_BLOCKS blocks; a larger grid, a one-dimensional one and
TileLang's "mlx" order run in launch order, and the plan says why."""
from __future__ import annotations

import functools

import numpy as np

from verify_reducer.spec import ir

CHECKED_BLOCKS = 1 << 20


def plan_raster(kernel: ir.Kernel) -> tuple[ir.Raster | None, str]:
    raster = kernel.raster
    if raster is None:
        return None, ""
    where = f"T.use_swizzle at line {raster.span.line}"
    grid = kernel.grid
    if raster.order == "mlx":
        return None, f"{where}: the mlx order is not generated; blocks run in launch order"
    if len(grid) < 2 or grid[0] == 1 or grid[1] == 1:
        return None, f"{where}: a grid of one row or column has one order"
    if grid[0] * grid[1] > CHECKED_BLOCKS:
        return None, (f"{where}: the order is checked over at most {CHECKED_BLOCKS} "
                      f"blocks, this grid has {grid[0] * grid[1]}; blocks run in launch order")
    if not _covers_once(raster.panel, raster.order, grid[0], grid[1]):
        return None, f"{where}: the panels do not cover the grid once; blocks run in " \
                     f"launch order"
    return raster, ""


@functools.lru_cache(maxsize=64)
def _covers_once(panel: int, order: str, gx: int, gy: int) -> bool:
    """Whether every block index of the gx × gy grid is taken by exactly one launched
    block (decided once per grid and panel: every plan of a kernel asks)."""
    x, y = np.meshgrid(np.arange(gx), np.arange(gy), indexing="ij")
    bx, by = block_indices(ir.Raster(panel, order, None), (gx, gy), x.ravel(), y.ravel())
    inside = (bx >= 0) & (bx < gx) & (by >= 0) & (by < gy)
    return bool(inside.all()) and \
        bool((np.bincount(bx * gy + by, minlength=gx * gy) == 1).all())


def describe(raster: ir.Raster) -> str:
    """The plan's line for an applied order (and the kernel's comment)."""
    return (f"blocks launched in panels of {raster.panel} "
            f"{'rows' if raster.order == 'row' else 'columns'} of the grid "
            f"(T.use_swizzle at line {raster.span.line}, codegen.plan_raster)")


def _panels(raster: ir.Raster, grid: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(extent along the panel, extent across, the panel's launch blocks, panels): for
    order "row" a panel spans panel_size rows (y) of the whole width (x)."""
    along, across = (grid[0], grid[1]) if raster.order == "row" else (grid[1], grid[0])
    size = raster.panel * along
    return along, across, size, -(-(along * across) // size)


def block_indices(raster: ir.Raster, grid: tuple[int, ...], x: np.ndarray,
                  y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The block indices (bx, by) the launched blocks (x, y) take: raster_c's C."""
    along, across, size, panels = _panels(raster, grid)
    launch = x + y * grid[0]
    offset, panel = launch % size, launch // size
    last = (along * across - (panels - 1) * size) // along      # the last panel's rows
    stride = np.where(panel + 1 < panels, raster.panel, last)
    first = np.where(panel % 2 == 1, along - 1 - offset // stride, offset // stride)
    second = offset % stride + panel * raster.panel
    return (first, second) if raster.order == "row" else (second, first)


def raster_c(raster: ir.Raster, grid: tuple[int, ...], bx: str | None,
             by: str | None) -> list[str]:
    """C that declares the block indices bx and by (their C names; None: not used) of
    this launched block: block_indices's arithmetic, on the grid's constants."""
    along, across, size, panels = _panels(raster, grid)
    last = (along * across - (panels - 1) * size) // along
    first, second = (bx, by) if raster.order == "row" else (by, bx)
    lines = [
        f"// {describe(raster)}",
        f"const int raster_launch = blockIdx.x + blockIdx.y * {grid[0]};",
        f"const int raster_panel = raster_launch / {size};",
        f"const int raster_offset = raster_launch % {size};",
        f"const int raster_stride = raster_panel + 1 < {panels} ? {raster.panel} : {last};"]
    if first is not None:
        lines.append(f"const int {first} = (raster_panel % 2 == 1) ? {along - 1} - "
                     f"raster_offset / raster_stride : raster_offset / raster_stride;")
    if second is not None:
        lines.append(f"const int {second} = raster_offset % raster_stride + raster_panel * "
                     f"{raster.panel};")
    return lines
