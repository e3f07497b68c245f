"""T.reinterpret on the GPU: interpreter = our CUDA = TileLang, bit for bit.

Each tests/programs/valid/reinterpret_*.py program (float32 bit tricks as DeepSeek's
act-quant writes them, the 16-bit floats and integers, float8 and 64-bit dtypes, Python
numbers, indices and guards made of bits) runs on its `# input:` values through the
logical interpreter, through our CUDA (CUDA's bit-cast intrinsics) under the canonical
and the fast plan, and through TileLang (`run --backend tilelang`'s adapter; TileLang's
CUDA prints a pointer pun, `*(uint *)(&x)`). Every output must be identical — NaN equal
to NaN, -0 unequal to +0 — which decides that numpy's bit views (bfloat16 as float32's
upper half, float8 through ml_dtypes) are the hardware's bits (docs/semantics.md §8). A
program TileLang cannot compile is skipped with TileLang's own message (recorded, never
a pass); a plan the planner refuses is skipped with its reason. CPU-only machines skip
all of it (tests/programs pins the same values by hand, tests/test_reinterpret.py
against struct)."""
from __future__ import annotations

import pytest

from cuda_env import ROOT, gpu_problem
from test_gpu_edge_semantics import cuda_agrees, tilelang_agrees

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")]

PROGRAMS = sorted((ROOT / "tests" / "programs" / "valid").glob("reinterpret_*.py"))
IDS = [p.stem for p in PROGRAMS]


@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_our_cuda_equals_the_interpreter(path, planner):
    cuda_agrees(path, planner)


@pytest.mark.tilelang
@pytest.mark.parametrize("path", PROGRAMS, ids=IDS)
def test_tilelang_equals_the_interpreter(path):
    tilelang_agrees(path)
