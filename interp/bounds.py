"""First-order error bounds for elementwise operations: the rules that carry a bound
shadow from the inputs of an expression to its result (docs/semantics.md §9).

A bound b beside a value v promises |v_backend − v_reference| ≤ b, where v_reference is
what this interpreter computed. `None` stands for an all-zero bound (the value is exact:
a backend must reproduce it bit for bit), which keeps the common exact case free of array
work. Rules, in the words of the brief:

- ± : the sum of the bounds; × : |a|·b_b + |b|·b_a + b_a·b_b; ÷ : the exact quotient
  interval bound; unary functions: the spread of f over [v − b, v + b] (they are all
  monotone, so the interval's ends suffice); max/min/abs/neg: 1-Lipschitz, the max bound.
- A rounded result whose inputs were uncertain gains the rounding of both sides: the
  backend rounds op(ã), we rounded op(a), so |r̃ − r| ≤ (D + 2u|r|)/(1 − u) + η with D the
  spread before rounding and η half the smallest subnormal (underflow is absolute).
- A non-float result (an integer or a comparison) computed from uncertain inputs is
  `inf` there: one flipped comparison or one truncation step apart can be anything.
- A float8 result saturates instead of overflowing (docs/semantics.md §8): saturation
  is rounding of the value clamped to ±finite_max, and clamping is 1-Lipschitz, so the
  same rule holds with the clamped spread.
- Exact inputs to + − × ÷ give a zero bound: every backend rounds the same correctly
  rounded operation (CUDA code is compiled without FMA contraction).
- Library functions (exp, log, ...) are not correctly rounded and numpy's differ from
  CUDA's: even exact inputs get an allowance in ulps of the result, CUDA's documented
  maximum error plus one ulp for numpy's own error (`cuda_ulps` of spec.intrinsics)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from verify_reducer.spec.dtypes import DType

# Half the smallest subnormal: the absolute error of rounding near zero.
_ETA = {"float8_e4m3fn": 2.0 ** -10, "float8_e5m2": 2.0 ** -17, "float16": 2.0 ** -25,
        "bfloat16": 2.0 ** -134, "float32": 2.0 ** -150, "float64": 2.0 ** -1074}


def clean(b: np.ndarray) -> np.ndarray:
    """A bound that could not be computed (NaN) is no bound at all."""
    return np.where(np.isnan(b), np.inf, b)


def any_uncertain(*bounds) -> bool:
    return any(b is not None and np.any(b > 0) for b in bounds)


def total(*bounds):
    """b_1 + b_2 + ... with None as zero."""
    return _fold(operator.add, bounds)


def widest(*bounds):
    """max(b_1, b_2, ...): the bound of a 1-Lipschitz (max-norm) function."""
    return _fold(np.maximum, bounds)


def _fold(combine, bounds):
    """combine over the bounds present; None when none is (no bound: exact)."""
    present = [b for b in bounds if b is not None]
    return functools.reduce(combine, present) if present else None


def taint(*bounds):
    """The bound of a non-float result computed from these inputs: inf where any input is
    uncertain, else exact."""
    b = widest(*bounds)
    if b is None or not np.any(b > 0):
        return None
    return np.where(b > 0, np.inf, 0.0)


def rounded(dtype: DType, spread, result: np.ndarray):
    """The bound of a value rounded into dtype after spreading by `spread` (None = 0)."""
    if spread is None:
        return None
    if not dtype.is_float:
        return taint(spread)
    u = dtype.unit_roundoff
    r = np.abs(result.astype(np.float64))
    with np.errstate(all="ignore"):
        grown = (spread + 2 * u * r) / (1 - u) + _ETA[dtype.name]
    return clean(np.where(spread > 0, grown, 0.0))


def _magnitudes(a, ba, b, bb):
    """|a|, b_a, |b|, b_b in float64, a missing bound read as 0."""
    return (np.abs(a.astype(np.float64)), 0.0 if ba is None else ba,
            np.abs(b.astype(np.float64)), 0.0 if bb is None else bb)


def product_spread(a, ba, b, bb):
    """|ã·b̃ − a·b| ≤ |a|·b_b + |b|·b_a + b_a·b_b."""
    if ba is None and bb is None:
        return None
    a, ba, b, bb = _magnitudes(a, ba, b, bb)
    with np.errstate(all="ignore"):
        return clean(np.asarray(a * bb + b * ba + ba * bb, dtype=np.float64))


def quotient_spread(a, ba, b, bb):
    """|ã/b̃ − a/b| ≤ (|b|·b_a + |a|·b_b) / (|b|·(|b| − b_b)) while b's interval excludes 0."""
    if ba is None and bb is None:
        return None
    a, ba, b, bb = _magnitudes(a, ba, b, bb)
    with np.errstate(all="ignore"):
        spread = (b * ba + a * bb) / (b * (b - bb))
        return clean(np.where(b > bb, spread, np.inf))


def monotone_spread(fn, x: np.ndarray, bx):
    """max |f(x ± b) − f(x)| for a monotone f, evaluated in float64 (NaN, i.e. leaving
    the domain, becomes inf)."""
    if bx is None:
        return None
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        fx = fn(x)
        spread = np.maximum(np.abs(fn(x + bx) - fx), np.abs(fn(x - bx) - fx))
    return clean(np.where(bx > 0, spread, 0.0))


def corner_spread(fn, a, ba, b, bb):
    """max over the four corners of the box [a ± b_a] × [b ± b_b] of |f − f(a, b)|, for f
    monotone in each argument on the box (pow with a positive base)."""
    if ba is None and bb is None:
        return None
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    ba = np.zeros_like(a) if ba is None else ba
    bb = np.zeros_like(b) if bb is None else bb
    with np.errstate(all="ignore"):
        centre = fn(a, b)
        spread = np.zeros_like(a)
        for sa in (-1, 1):
            for sb in (-1, 1):
                spread = np.maximum(spread, np.abs(fn(a + sa * ba, b + sb * bb) - centre))
    return clean(np.where((ba > 0) | (bb > 0), spread, 0.0))


def ulps(dtype: DType, result: np.ndarray, count: int):
    """count ulps of |result| in dtype (0 where the result is not finite: infinities and
    NaN must match exactly)."""
    if count == 0 or not dtype.is_float:
        return None
    r = np.abs(result.astype(np.float64))
    with np.errstate(all="ignore"):
        if dtype.name == "bfloat16":
            ulp = np.spacing(r.astype(np.float32)).astype(np.float64) * 2.0 ** 16
        elif dtype.is_float8:
            # 2^(e − p + 1) for |r| in [2^e, 2^(e+1)), the subnormal spacing below
            exponent = np.floor(np.log2(np.maximum(r, dtype.smallest_normal)))
            p = -np.log2(dtype.unit_roundoff)
            ulp = np.exp2(exponent - p + 1)
        else:
            ulp = np.spacing(r.astype(dtype.np)).astype(np.float64)
    return np.where(np.isfinite(r), count * ulp, 0.0)
