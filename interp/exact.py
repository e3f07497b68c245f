"""Exact combination of contributions per logical output, and the reassociation bound of
the result (docs/semantics.md §9).

Integers wrap and max/min/bitwise ops are exact in any order, so numpy's unbuffered
`ufunc.at` in the reducer dtype gives the one right answer. A float sum is computed
exactly and rounded once into the reducer dtype: `math.fsum` is the correctly rounded
float64 of the exact sum, a second fsum gives the sign of the residual (exact − float64),
and rounding to odd on that residual makes the final cast into a narrower float round
once, not twice (p + 2 ≤ 53 bits, the classic round-to-odd argument). A float product is
multiplied exactly with `fractions.Fraction` and rounded the same way; that is a Python
loop per contribution, fine for the small counts products see in kernels.

The bound of a float sum is `γ(n)·Σ|xᵢ| + u·|exact|` (docs/semantics.md §9; n counts the
seed), widened by the contributions' own bounds bᵢ:
`γ(n)·Σ(|xᵢ| + bᵢ) + Σbᵢ + u·|r|/(1 − u)`. One contribution is exact in any order
(identity ⊕ x = x). A product gets the analogous
`γ(n−1)·Π(|xᵢ|+bᵢ) + (Π(|xᵢ|+bᵢ) − Π|xᵢ|) + u·|r|/(1 − u)`. max/min carry the widest
contribution bound (they are 1-Lipschitz); integer results are exact, or inf when an
uncertain float fed them."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from verify_reducer.spec.dtypes import DType
from verify_reducer.spec.ops import Monoid

from .bounds import clean

# Bounds are computed in float64; this relative slack covers their own rounding.
_SLACK = 1 + 2.0 ** -40


def gamma(n: np.ndarray, u: float) -> np.ndarray:
    """γ(n) = n·u / (1 − n·u), inf once n·u ≥ 1 (the rigorous bound is then vacuous)."""
    nu = n.astype(np.float64) * u
    with np.errstate(all="ignore"):
        return np.where(nu < 1, nu / (1 - nu), np.inf)


def combine(monoid: Monoid, dtype: DType, flat: np.ndarray, values: np.ndarray,
            bounds: np.ndarray | None, size: int, seed: np.ndarray | None = None,
            seed_bound: np.ndarray | None = None):
    """seed ⊕ (⊕ of the values sent to each output) for outputs 0..size−1.

    flat: the output of each contribution; values: already in dtype; bounds: their float64
    bounds (None = exact); seed: one value per output (None = no seed). Returns
    (result in dtype's storage, float64 bound per output, contributions per output)."""
    counts = np.bincount(flat, minlength=size).astype(np.int64)
    if seed is not None:
        flat = np.concatenate([flat, np.arange(size)])
        values = np.concatenate([values, np.asarray(seed, dtype.np).reshape(size)])
        if bounds is not None or seed_bound is not None:
            bounds = np.concatenate([_zeros_if_none(bounds, len(values) - size),
                                     _zeros_if_none(seed_bound, size)])
    if dtype.is_float and monoid.name == "sum":
        result, bound = _float_sum(dtype, flat, values, bounds, size)
    elif dtype.is_float and monoid.name == "product":
        result, bound = _float_product(dtype, flat, values, bounds, size)
    else:
        result, bound = _in_any_order(monoid, dtype, flat, values, bounds, size)
    return result, bound, counts


def _zeros_if_none(b, n):
    return np.zeros(n) if b is None else b


def _in_any_order(monoid, dtype, flat, values, bounds, size):
    """Ops whose result does not depend on the order: integer ops (wrapping), max/min."""
    ufunc = monoid.float_ufunc if dtype.is_float else monoid.ufunc
    acc = np.full(size, monoid.identity(dtype), dtype=dtype.np)
    ufunc.at(acc, flat, values.astype(dtype.np))
    bound = np.zeros(size)
    if bounds is not None:
        np.maximum.at(bound, flat, bounds)
        if not (dtype.is_float and monoid.name in ("max", "min")):
            bound = np.where(bound > 0, np.inf, 0.0)
    return dtype.quantize(acc), bound


def _groups(flat, values, size):
    """Contributions sorted by output: (order, values per output, counts)."""
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=size)
    groups = np.split(values[order].astype(np.float64), np.cumsum(counts)[:-1])
    return order, groups, counts


def _float_sum(dtype, flat, values, bounds, size):
    order, groups, n = _groups(flat, values, size)
    s64 = np.zeros(size)
    residual = np.zeros(size)
    for o, g in enumerate(groups):
        if len(g) == 0:
            continue
        if len(g) == 1:
            s64[o] = g[0]
            continue
        if not np.isfinite(g).all():
            with np.errstate(invalid="ignore"):  # inf − inf is NaN on purpose, as IEEE says
                s64[o] = float(np.sum(g))   # IEEE: inf + finite = inf, NaN wins
            continue
        s64[o], residual[o] = _fsum_with_residual(g.tolist())
    result = round_once(s64, residual, dtype)

    mags = np.abs(values.astype(np.float64))
    b = np.zeros_like(mags) if bounds is None else bounds
    abs_sum = np.bincount(flat, weights=mags + b, minlength=size)
    b_sum = np.bincount(flat, weights=b, minlength=size)
    u = dtype.unit_roundoff
    with np.errstate(all="ignore"):
        bound = (gamma(n, u) * abs_sum + b_sum
                 + u * np.abs(result.astype(np.float64)) / (1 - u)) * _SLACK
    exact_alone = ((n <= 1) & (b_sum == 0)) | exact_sums(dtype, flat, values, bounds, size)
    return result, clean(np.where(exact_alone | ~np.isfinite(s64), 0.0, bound))


def _fsum_with_residual(xs: list[float]) -> tuple[float, float]:
    """(round-to-nearest float64 of Σxs, a float with the sign of the residual Σxs − it)."""
    try:
        s = math.fsum(xs)
        return s, math.fsum(xs + [-s])
    except OverflowError:           # float64 contributions whose partial sums overflow
        exact = sum(map(Fraction, xs), Fraction(0))
        return _nearest_with_residual(exact)


def _nearest_with_residual(exact: Fraction) -> tuple[float, float]:
    try:
        s = float(exact)            # CPython rounds int / int correctly
    except OverflowError:
        return (math.inf if exact > 0 else -math.inf), 0.0
    rest = exact - Fraction(s)
    return s, float((rest > 0) - (rest < 0))


def _float_product(dtype, flat, values, bounds, size):
    order, groups, n = _groups(flat, values, size)
    s64 = np.ones(size)
    residual = np.zeros(size)
    for o, g in enumerate(groups):
        if len(g) == 0:
            continue
        if not np.isfinite(g).all() or len(g) == 1:
            s64[o] = float(np.prod(g))
            continue
        exact = Fraction(1)
        for x in g.tolist():
            exact *= Fraction(x)
        s64[o], residual[o] = _nearest_with_residual(exact)
    result = round_once(s64, residual, dtype)

    mags = np.abs(values.astype(np.float64))[order]
    b = (np.zeros_like(mags) if bounds is None else bounds[order])
    starts = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.intp)
    nonempty = n > 0
    wide = np.ones(size)
    narrow = np.ones(size)
    with np.errstate(all="ignore"):
        if mags.size:
            wide[nonempty] = np.multiply.reduceat(mags + b, starts[nonempty])
            narrow[nonempty] = np.multiply.reduceat(mags, starts[nonempty])
        u = dtype.unit_roundoff
        bound = (gamma(np.maximum(n - 1, 0), u) * wide + (wide - narrow)
                 + u * np.abs(result.astype(np.float64)) / (1 - u)) * _SLACK
    b_any = np.bincount(flat[order], weights=b, minlength=size) > 0
    leaves = _leaves_range(dtype, flat[order], mags + b, size)
    exact_alone = ((n <= 1) & ~b_any) | \
        (~leaves & ~b_any & _odd_parts_fit(dtype, flat, values, size))
    bound = np.where(leaves & (n > 1), np.inf, bound)
    return result, clean(np.where(exact_alone | ~np.isfinite(s64), 0.0, bound))


def _leaves_range(dtype, flat, mags, size) -> np.ndarray:
    """Per output: whether some order of its terms can overflow or underflow a partial
    product where the exact product does not. The γ bound of a product assumes every
    partial product stays normal; 0..95 multiplied 1..95 first overflows float32 to inf
    and inf × 0 is NaN, tiny × tiny underflows to 0 before × huge. Such an output gets
    no bound (reported unchecked), never a false mismatch. A partial product's magnitude
    lies between the product of the terms below 1 and the product of those above 1
    (in log2, so the test itself cannot overflow)."""
    nonzero = mags > 0
    with np.errstate(divide="ignore"):
        logs = np.where(nonzero, np.log2(np.where(nonzero, mags, 1.0)), 0.0)
    high = np.bincount(flat, weights=np.maximum(logs, 0.0), minlength=size)
    low = np.bincount(flat, weights=np.minimum(logs, 0.0), minlength=size)
    # one bit of margin for the roundings on the way
    return (high >= np.log2(dtype.finite_max) - 1) | \
        (low <= np.log2(dtype.smallest_normal) + 1)


def round_once(s64: np.ndarray, residual: np.ndarray, dtype: DType) -> np.ndarray:
    """The exact value s64 + residual (s64 its nearest float64, residual only by sign)
    rounded once to nearest-even in dtype."""
    if dtype.name == "float64":
        return s64.copy()
    # Round to odd at 53 bits: an inexact float64 with an even last bit steps one ulp
    # toward the exact value, so no later rounding can mistake it for a tie.
    inexact = (residual != 0) & np.isfinite(s64)
    even = (s64.view(np.uint64) & np.uint64(1)) == 0
    toward = np.where(residual > 0, np.inf, -np.inf)
    odd64 = np.where(inexact & even, np.nextafter(s64, toward), s64)
    if dtype.name == "bfloat16":
        # quantize goes through float32 and would round twice: round to odd at 24 bits too
        return dtype.quantize(_round_to_odd_float32(odd64))
    with np.errstate(over="ignore"):
        return dtype.quantize(odd64)


def _round_to_odd_float32(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        f = x.astype(np.float32)
    inexact = (f.astype(np.float64) != x) & np.isfinite(f)
    neighbour = np.nextafter(f, np.where(x > f, np.float32(np.inf), np.float32(-np.inf)))
    f_odd = (f.view(np.uint32) & np.uint32(1)) == 1
    return np.where(inexact & ~f_odd, neighbour, f).astype(np.float32)


def _binary_parts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(odd part, exponent) of each finite nonzero |value| = odd · 2^exponent (odd an
    integer below 2^53 in float64); zeros give odd 0."""
    mags = np.abs(values.astype(np.float64))
    frac, exp = np.frexp(mags)
    mantissa = (frac * 2.0 ** 53).astype(np.int64)          # exact: frac has 53 bits
    low = mantissa & -mantissa
    shift = np.where(low > 0, np.log2(np.where(low > 0, low, 1)), 0).astype(np.int64)
    odd = np.where(mantissa > 0, mantissa >> shift, 0)
    return odd, exp.astype(np.int64) - 53 + shift


def exact_sums(dtype: DType, flat: np.ndarray, values: np.ndarray,
               bounds: np.ndarray | None, size: int) -> np.ndarray:
    """Per output: whether its float sum is exact in every order. It is when its terms
    are exact (bound 0), finite, all multiples of one power of two g (the smallest
    `lowbit` among them) and Σ|xᵢ| ≤ 2^p·g (p the significand's bits) and ≤ the largest
    finite value: every partial sum of any subset is then a multiple m·g with |m| ≤ 2^p,
    which the dtype represents, so no addition of any order rounds."""
    out = np.ones(size, dtype=bool)
    if len(flat) == 0:
        return out
    v = values.astype(np.float64)
    finite = np.isfinite(v)
    bad = ~finite if bounds is None else ~finite | (bounds != 0)
    if bad.any():
        out[np.unique(flat[bad])] = False
    odd, exp = _binary_parts(np.where(finite, v, 0.0))
    big = np.iinfo(np.int64).max
    low = np.full(size, big, dtype=np.int64)
    np.minimum.at(low, flat, np.where(odd > 0, exp, big))
    mags = np.abs(np.where(finite, v, 0.0))
    total = np.bincount(flat, weights=mags, minlength=size)
    n = np.bincount(flat, minlength=size)
    # the float64 sum of magnitudes is itself rounded: widen it by γ(n) at 2^-53
    total = total * (1 + gamma(n, 2.0 ** -53)) * _SLACK
    p = int(round(-np.log2(dtype.unit_roundoff)))
    with np.errstate(over="ignore"):
        fits = (low == big) | (total <= np.ldexp(1.0, np.minimum(low + p, 2000)))
    return out & fits & (total <= float(dtype.finite_max))


def _odd_parts_fit(dtype: DType, flat: np.ndarray, values: np.ndarray,
                   size: int) -> np.ndarray:
    """Per output: whether the product of the odd parts of its finite terms is below 2^p,
    so every partial product has at most p significant bits (the caller checks that no
    partial product can leave the normal range)."""
    v = values.astype(np.float64)
    finite = np.isfinite(v)
    out = np.ones(size, dtype=bool)
    if (~finite).any():
        out[np.unique(flat[~finite])] = False
    odd, _ = _binary_parts(np.where(finite, v, 0.0))
    logs = np.log2(np.maximum(odd, 1).astype(np.float64))
    bits = np.bincount(flat, weights=logs, minlength=size)
    p = -np.log2(dtype.unit_roundoff)
    return out & (bits < p - 1e-6)
