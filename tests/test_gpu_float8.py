"""float8 on the GPU: interpreter = our CUDA (both plans) = TileLang, bit for bit, on
dense probes of every conversion the float8 dtypes take part in (docs/semantics.md §8).

The meaning the interpreter gives (round to nearest even as ml_dtypes, then saturation
at ±finite_max for every magnitude past it, infinity included; NaN stays NaN) was read
from the source, not measured: cutlass's float_e4m3_t(float) executes
`cvt.rn.satfinite.e4m3x2.f32` on sm_89 and later, TileLang prints `(fp8_e4_t)x` for a
scalar cast and `__nv_cvt_float2_to_fp8x2(..., __NV_SATFINITE, ...)` for a vectorized
one, and CUDA 13.0's __nv_cvt_float_to_fp8 saturates likewise. These tests decide it on
the H200:

- float32 → float8_e4m3fn / float8_e5m2: every finite value of both formats, every
  midpoint between neighbours and the float32 values just beside each midpoint (ties to
  even, subnormals), both signs; zeros of both signs, float32 subnormals, values past
  the largest finite one, ±inf, NaN;
- float8 → float32, float16 and bfloat16 of every finite and NaN bit pattern (TileLang
  prints __tl_cvt_fp8_to_half / __tl_cvt_fp8_to_bfloat16 for the 16-bit ones);
- float8 + float8 in float8 on every finite pattern added to itself (saturating past
  the largest finite value).

A probe TileLang cannot compile is skipped with TileLang's own message (recorded, never
a pass). CPU-only machines skip the GPU tests (tests/test_float8.py pins the same
meaning against ml_dtypes there) and still check that the probe programs verify (the
interpreter and the simulator in both plans) and that the probes cover what they say."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from cuda_env import gpu_problem, load, plan, tilelang_outputs


BLOCK = 128
FORMATS = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _padded(values: np.ndarray) -> np.ndarray:
    """values repeated up to a whole number of blocks."""
    count = -(-len(values) // BLOCK) * BLOCK
    return np.resize(values, count)


def _to_float8_probes() -> np.ndarray:
    """The float32 values every float → float8 conversion is probed on."""
    probes = [np.float32([0.0, -0.0, 1e-40, -1e-40, np.inf, -np.inf, np.nan, 1e30, -1e30,
                          3.4e38, 449.0, 464.0, 465.0, 61440.0, 57344.0 * 1.5])]
    for kind in FORMATS.values():
        grid = np.arange(256, dtype=np.uint8).view(kind).astype(np.float64)
        grid = np.unique(grid[np.isfinite(grid)])
        mids = ((grid[1:] + grid[:-1]) / 2).astype(np.float32)
        probes += [grid.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
                   np.nextafter(mids, np.float32(-np.inf))]
    return _padded(np.concatenate(probes))


def _patterns(name: str) -> np.ndarray:
    """Every finite and NaN value of the format (e5m2's infinities are refused inputs)."""
    values = np.arange(256, dtype=np.uint8).view(FORMATS[name]).astype(np.float32)
    return _padded(values[~np.isinf(values)])


TO_FLOAT8 = '''
import tilelang.language as T

N = {n}


@T.prim_func
def main(x: T.Tensor((N,), T.float32), q4: T.Tensor((N,), T.float8_e4m3fn),
         q5: T.Tensor((N,), T.float8_e5m2)):
    with T.Kernel(N // 128, threads=128) as bx:
        for j in T.Parallel(128):
            q4[bx * 128 + j] = x[bx * 128 + j]
            q5[bx * 128 + j] = T.cast(x[bx * 128 + j], T.float8_e5m2)
'''

FROM_FLOAT8 = '''
import tilelang.language as T

N = {n}


@T.prim_func
def main(a: T.Tensor((N,), T.{dtype}), f: T.Tensor((N,), T.float32),
         h: T.Tensor((N,), T.float16), b: T.Tensor((N,), T.bfloat16),
         twice: T.Tensor((N,), T.{dtype})):
    with T.Kernel(N // 128, threads=128) as bx:
        for j in T.Parallel(128):
            f[bx * 128 + j] = T.cast(a[bx * 128 + j], T.float32)
            h[bx * 128 + j] = T.cast(a[bx * 128 + j], T.float16)
            b[bx * 128 + j] = T.cast(a[bx * 128 + j], T.bfloat16)
            twice[bx * 128 + j] = a[bx * 128 + j] + a[bx * 128 + j]
'''


def _program(tmp_path, text: str):
    path = tmp_path / "float8_probe.py"
    path.write_text(text)
    return path


def _cases():
    yield pytest.param(TO_FLOAT8.format(n=len(_to_float8_probes())),
                       {"x": _to_float8_probes()}, id="float32-to-float8")
    for name in FORMATS:
        values = _patterns(name)
        yield pytest.param(FROM_FLOAT8.format(n=len(values), dtype=name), {"a": values},
                           id=f"{name}-to-wider-and-doubled")


def _inputs(func, given):
    from verify_reducer.verify.oracle.inputs import prepare
    return prepare(func, seed=0, given=given)


def _interpreted(func, inputs):
    from verify_reducer.interp.logical import run
    return run(func, inputs).outputs


def _differences(name, got, want) -> list[str]:
    g = np.asarray(got, np.float64).ravel()
    w = np.asarray(want, np.float64).ravel()
    same = [(math.isnan(a) and math.isnan(b)) or
            (a == b and math.copysign(1, a) == math.copysign(1, b))
            for a, b in zip(g.tolist(), w.tolist())]
    return [f"{name}[{i}]: got {g[i]!r}, interpreter {w[i]!r}"
            for i, ok in enumerate(same) if not ok]


def _agree(func, inputs, got, want) -> None:
    bad = []
    for p in func.params:
        for line in _differences(p.name, got[p.name], want[p.name]):
            index = int(line.split("[", 1)[1].split("]", 1)[0])
            probe = {q.name: inputs[q.name].ravel()[index] for q in func.params
                     if q.name in ("x", "a")}
            bad.append(f"{line} (input {probe})")
    assert not bad, f"{len(bad)} difference(s):\n" + "\n".join(bad[:30])


@pytest.mark.gpu
@pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")
@pytest.mark.parametrize("planner", ["canonical", "fast"])
@pytest.mark.parametrize("text, given", list(_cases()))
def test_our_cuda_equals_the_interpreter(tmp_path, text, given, planner):
    from verify_reducer.codegen.runner import run_cuda
    path = _program(tmp_path, text)
    func = load(path)
    inputs = _inputs(func, given)
    _agree(func, inputs, run_cuda(plan(path, planner), inputs), _interpreted(func, inputs))


@pytest.mark.gpu
@pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")
@pytest.mark.tilelang
@pytest.mark.parametrize("text, given", list(_cases()))
def test_tilelang_equals_the_interpreter(tmp_path, text, given):
    path = _program(tmp_path, text)
    func = load(path)
    inputs = _inputs(func, given)
    _agree(func, inputs, tilelang_outputs(path, func, inputs), _interpreted(func, inputs))


def test_the_probes_cover_what_the_docstring_says():
    """Runs everywhere: the probe sets hold every finite value, the ties and the
    specials, so a pass on the GPU means what it says."""
    probes = _to_float8_probes()
    assert np.isnan(probes).any() and np.isposinf(probes).any() and np.isneginf(probes).any()
    assert (np.signbit(probes) & (probes == 0)).any()
    for name, kind in FORMATS.items():
        grid = np.arange(256, dtype=np.uint8).view(kind).astype(np.float32)
        finite = grid[np.isfinite(grid)]
        assert np.isin(finite, probes).all()
        assert np.isin(finite, _patterns(name)).all() and np.isnan(_patterns(name)).any()


@pytest.mark.parametrize("text, given", list(_cases()))
def test_the_probe_programs_verify(tmp_path, text, given):
    from verify_reducer.verify.oracle import pipeline
    report = pipeline.check(str(_program(tmp_path, text)), given=given, blocks="all")
    assert report.exit_code == pipeline.EXIT_OK, report.verdict
