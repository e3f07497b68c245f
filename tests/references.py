"""Ground truth for every program in examples/: plain numpy/Python, written from what the
kernel is meant to compute, never from the interpreter.

For each example, `REFERENCES[name]` holds
- `outputs(inputs) -> {name: array}`: the expected value of every output tensor. Float
  reductions are exact (`math.fsum` of float64 values that hold the float32/float16
  contributions exactly; exact rationals for products); integer results wrap like the
  GPU's. Where the kernel does ordinary float32 arithmetic *after* a reduction (the
  online-softmax rescale, `y = 2x + sum`), the reference performs that step in float32
  on the correctly rounded reduction result, as the kernel does.
- `inputs(rng) -> {name: array}` (optional): inputs that exercise the example better
  than the generic generator (`verify.oracle.inputs.generate`), e.g. powers of two for an exact
  float product or full-range integers for bitwise ops.

Arrays passed in are the kernel's parameters, already in their declared dtypes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class Reference:
    outputs: Callable[[Arrays], Arrays]
    inputs: Callable[[np.random.Generator], Arrays] | None = None


# ----------------------------------------------------------------------------- helpers

def f64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def fsum_rows(a) -> np.ndarray:
    """Exact (correctly rounded to float64) sum over the last axis."""
    a = f64(a)
    flat = a.reshape(-1, a.shape[-1])
    return np.array([math.fsum(r) for r in flat]).reshape(a.shape[:-1])


def fsum_all(a) -> np.ndarray:
    return np.array([math.fsum(f64(a).ravel())])


def wrap(values, dtype) -> np.ndarray:
    """Python ints wrapped into an integer dtype (two's complement), as the GPU does."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    out = [((int(v) - int(info.min)) % span) + int(info.min) for v in np.ravel(values)]
    return np.array(out, dtype=dtype).reshape(np.shape(values))


def int_sum(a, dtype, seed: int = 0) -> np.ndarray:
    return wrap([seed + sum(int(v) for v in np.ravel(a))], dtype)


def exact_product(row) -> float:
    p = Fraction(1)
    for v in np.ravel(row):
        p *= Fraction(float(v))
    return float(p)


def bitwise(ufunc, a, dtype) -> np.ndarray:
    return np.array([ufunc.reduce(np.asarray(a, dtype=dtype))], dtype=dtype)


# ----------------------------------------------------------------------------- examples

def _minimal(i: Arrays) -> Arrays:
    return {"out": fsum_all(i["x"])}


def _gemv(i: Arrays) -> Arrays:
    # fp16 x fp16 products are exact in float64 (and in float32); only the sum rounds.
    products = f64(i["A"]) * f64(i["x"])[None, :]
    return {"y": fsum_rows(products)}


def _gemv_splitk(i: Arrays) -> Arrays:
    # y += A @ x: every block's partial row sums are added atomically onto y's initial
    # values, so the exact result is the sum of the initial value and every product.
    products = f64(i["A"]) * f64(i["x"])[None, :]
    return {"y": fsum_rows(np.concatenate([f64(i["y"])[:, None], products], axis=1))}


def _two_sites(i: Arrays) -> Arrays:
    return {"out": fsum_all(np.concatenate([f64(i["a"]), f64(i["b"])]))}


def _replicated_write(i: Arrays) -> Arrays:
    x = np.asarray(i["x"], np.float32)
    s = fsum_all(x)
    s32 = s.astype(np.float32)                       # the finalized value the loop reads
    y = (x * np.float32(2.0)) + s32[0]               # float32 arithmetic, as the kernel
    return {"out": s, "y": y.astype(np.float64)}


def _predicated(i: Arrays) -> Arrays:
    x = f64(i["x"])
    return {"pos_sum": np.array([math.fsum(x[x > 0])]),
            "head_count": wrap([int(np.count_nonzero(x[:8] > 0))], np.int32)}


def _seeded(i: Arrays) -> Arrays:
    return {"out": np.array([math.fsum([1.5, *f64(i["x"])])]),
            "count": int_sum(i["n"], np.int32, seed=100)}


def _max_min(i: Arrays) -> Arrays:
    x = np.asarray(i["x"], np.float32)
    return {"row_max": f64(x.max(axis=1)), "row_min": f64(x.min(axis=1)),
            "row_absmax": f64(np.abs(x).max(axis=1))}


def _bitwise(i: Arrays) -> Arrays:
    x, u = i["x"], i["u"]
    return {"x_and": bitwise(np.bitwise_and, x, np.int32),
            "x_or": bitwise(np.bitwise_or, x, np.int32),
            "x_xor": bitwise(np.bitwise_xor, x, np.int32),
            "u_and": bitwise(np.bitwise_and, u, np.uint32),
            "u_xor": bitwise(np.bitwise_xor, u, np.uint32)}


def _bitwise_inputs(rng: np.random.Generator) -> Arrays:
    # Full-range bits; a shared mask keeps bitand/bitor away from the trivial 0 / -1.
    x = rng.integers(-2**31, 2**31, size=8, dtype=np.int64)
    x = (x | 0x00100401) & ~0x40000002
    u = rng.integers(0, 2**32, size=8, dtype=np.int64)
    u = (u | 0x80000010) & (0xFFFFFFFF ^ 0x00020000)
    return {"x": wrap(x, np.int32), "u": u.astype(np.uint32)}


def _reducer_2d(i: Arrays) -> Arrays:
    x = f64(i["x"]).reshape(4, 4, 8, 4)              # (r//4, r%4, c//4, c%4)
    return {"pooled": fsum_rows(x.transpose(0, 2, 1, 3).reshape(4, 8, 16))}


def _serial_epochs(i: Arrays) -> Arrays:
    return {"out": fsum_rows(f64(i["x"]).reshape(6, 4, 4))}


def _online_softmax(i: Arrays) -> Arrays:
    """The kernel's own recurrence: per tile, the exact row max, then the correctly
    rounded sum of float32 exp(x - m_new), and the float32 rescale of the running sum."""
    X = np.asarray(i["X"], np.float32)
    M, N, BN = X.shape[0], X.shape[1], 64
    m = np.full(M, -np.inf, np.float32)
    l = np.zeros(M, np.float32)
    for t in range(0, N, BN):
        tile = X[:, t:t + BN]
        m_new = np.maximum(m, tile.max(axis=1))
        e = np.exp(tile - m_new[:, None])             # float32, as T.exp on float32
        s = fsum_rows(e).astype(np.float32)
        with np.errstate(invalid="ignore"):
            l = l * np.exp(m - m_new) + s
        m = m_new
    return {"row_max": f64(m), "row_sum": f64(l)}


def _softmax_inputs(rng: np.random.Generator) -> Arrays:
    # Rows whose maximum moves between tiles, so the rescale path matters.
    X = rng.normal(0.0, 3.0, size=(16, 256)) + np.linspace(-4, 4, 256)[None, :]
    return {"X": X.astype(np.float32)}


def _warp_group(i: Arrays) -> Arrays:
    return {"out": fsum_all(i["x"])}


def _product(i: Arrays) -> Arrays:
    return {"out": np.array([exact_product(r) for r in np.asarray(i["x"], np.float32)])}


def _product_inputs(rng: np.random.Generator) -> Arrays:
    # Signed powers of two: every partial product is exact, whatever the order.
    k = rng.integers(-3, 4, size=(2, 8))
    sign = rng.choice([-1.0, 1.0], size=(2, 8))
    return {"x": (sign * np.exp2(k)).astype(np.float32)}


def _int_wrap(i: Arrays) -> Arrays:
    p = 1
    for v in np.ravel(i["p"]):
        p *= int(v)
    return {"total": int_sum(i["x"], np.int32),
            "prod": wrap([p], np.int32),
            "utotal": int_sum(i["u"], np.uint32)}


def _int_wrap_inputs(rng: np.random.Generator) -> Arrays:
    return {"x": wrap(rng.integers(-2**31, 2**31, size=8), np.int32),
            "p": wrap(rng.integers(-2**31, 2**31, size=16) | 1, np.int32),
            "u": rng.integers(2**30, 2**32, size=4).astype(np.uint32)}


def _argmax_packed(i: Arrays) -> Arrays:
    x = np.asarray(i["x"], np.int32)
    # numpy's argmax returns the first maximum: the smaller column on a tie
    return {"arg": np.argmax(x, axis=1).astype(np.int32), "best": x.max(axis=1)}


def _argmax_inputs(rng: np.random.Generator) -> Arrays:
    # few distinct values, so most rows have tied maxima; the extremes of int32 too
    x = rng.integers(-3, 4, size=(4, 16)).astype(np.int32)
    x[3, rng.integers(0, 16, size=2)] = np.iinfo(np.int32).max
    x[2, :] = np.iinfo(np.int32).min
    return {"x": x}


REFERENCES: dict[str, Reference] = {
    "minimal_legacy": Reference(_minimal),
    "minimal_v2": Reference(_minimal),
    "minimal_rfc": Reference(_minimal),
    "gemv_pipelined": Reference(_gemv),
    "gemv_nondividing": Reference(_gemv),
    "gemv_splitk": Reference(_gemv_splitk),
    "two_sites_8_16": Reference(_two_sites),
    "gemv_family": Reference(_gemv),
    "gemv_tail_family": Reference(_gemv),
    "two_sites_family": Reference(_two_sites),
    "replicated_write": Reference(_replicated_write),
    "predicated_update": Reference(_predicated),
    "seeded_init": Reference(_seeded),
    "max_min": Reference(_max_min),
    "bitwise": Reference(_bitwise, _bitwise_inputs),
    "reducer_2d": Reference(_reducer_2d),
    "serial_epochs": Reference(_serial_epochs),
    "online_softmax_stats": Reference(_online_softmax, _softmax_inputs),
    "warp_group": Reference(_warp_group),
    "product": Reference(_product, _product_inputs),
    "int_wrap": Reference(_int_wrap, _int_wrap_inputs),
    "argmax_packed": Reference(_argmax_packed, _argmax_inputs),
}
