"""The edge-semantics probes on the GPU: interpreter = our CUDA = TileLang, bit for bit.

Each tests/programs/valid/edge_*.py program (casts at every magnitude, NaN, signed
zeros, mixed signedness, 64-bit integers into floats, conversions into 16-bit floats)
runs on its `# input:` values through the logical interpreter, through our CUDA under
the canonical and the fast plan, and through TileLang (`run --backend tilelang`'s
adapter). Every output must be identical — NaN equal to NaN, -0 unequal to +0. A
program TileLang cannot compile is skipped with TileLang's own message (recorded, never
a pass). CPU-only machines skip all of it (tests/test_edge_semantics.py pins the same
values against the Python ground truth there)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from cuda_env import ROOT, gpu_problem, load, plan, tilelang_outputs

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")]

EDGE = sorted((ROOT / "tests" / "programs" / "valid").glob("edge_*.py"))
IDS = [p.stem for p in EDGE]


def _inputs(path):
    from verify_reducer.verify.oracle.expect import parse_expectation
    from verify_reducer.verify.oracle.inputs import prepare
    given = parse_expectation(path.read_text(), str(path)).inputs
    return prepare(load(path), given=given, seed=0)


def _interpreted(path, inputs):
    from verify_reducer.interp.logical import run
    return run(load(path), inputs).outputs


def _differences(name, got, want) -> list[str]:
    g, w = np.asarray(got).ravel(), np.asarray(want).ravel()
    if g.dtype.kind == "f":
        same = [(math.isnan(a) and math.isnan(b)) or
                (a == b and math.copysign(1, a) == math.copysign(1, b))
                for a, b in zip(g.astype(np.float64).tolist(), w.astype(np.float64).tolist())]
    else:
        same = (g == w).tolist()
    return [f"{name}[{i}]: got {g[i]!r}, interpreter {w[i]!r}"
            for i, ok in enumerate(same) if not ok]


def _agree(func, got, want) -> None:
    bad = [d for p in func.params for d in _differences(p.name, got[p.name], want[p.name])]
    assert not bad, "\n".join(bad[:20])


def cuda_agrees(path, planner) -> None:
    """Our CUDA under planner equals the interpreter on the program's inputs, bit for bit."""
    from verify_reducer.codegen.runner import run_cuda
    inputs = _inputs(path)
    physical = plan(path, planner)
    _agree(physical.func, run_cuda(physical, inputs), _interpreted(path, inputs))


def tilelang_agrees(path) -> None:
    """TileLang equals the interpreter on the program's inputs, bit for bit."""
    inputs = _inputs(path)
    func = load(path)
    _agree(func, tilelang_outputs(path, func, inputs), _interpreted(path, inputs))


@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("path", EDGE, ids=IDS)
def test_our_cuda_equals_the_interpreter(path, planner):
    cuda_agrees(path, planner)


@pytest.mark.tilelang
@pytest.mark.parametrize("path", EDGE, ids=IDS)
def test_tilelang_equals_the_interpreter(path):
    tilelang_agrees(path)
