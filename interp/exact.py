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
uncertain float fed them.

A bound that could not tell a right answer from a wrong one is made infinite rather
than left vacuous: γ(n) ≥ 1 (n·u ≥ 1/2) admits either sign and every magnitude any
order could reach. Orders whose partial sums (products) can overflow the dtype make ±inf
a legal result: the bound is widened to reach the dtype's largest finite value on that
side, which interp.accept reads as "this infinity is legal"; where both signs can
overflow (NaN legal too) the element cannot be judged (inf). A sum of exact terms that
are all multiples of one power of two and whose positive and negative parts each stay
within 2^p of it is exact in every order (bound 0; `exact_sums`, the proof in
docs/semantics.md §9).

A float8 dtype saturates instead of overflowing (docs/semantics.md §8): an order whose
partial sum (product) passes ±finite_max goes on from it, so no infinity marks that
order and the γ bound no longer holds for it; where an order can saturate, the element
is not judged (bound inf)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from verify_reducer.spec.dtypes import DType, FLOAT64
from verify_reducer.spec.ops import Monoid

from .bounds import clean

# Bounds are computed in float64; this relative slack covers their own rounding.
_SLACK = 1 + 2.0 ** -40


def gamma(n: np.ndarray, u: float) -> np.ndarray:
    """γ(n) = n·u / (1 − n·u), inf once n·u ≥ 1/2: γ ≥ 1 would let the rounding term
    alone exceed Σ|xᵢ|, admitting either sign and any magnitude an order could reach (a
    vacuous bound), so the element is not judged instead (docs/semantics.md §9)."""
    nu = np.asarray(n).astype(np.float64) * u
    with np.errstate(all="ignore"):
        return np.where(nu < 0.5, nu / (1 - nu), np.inf)


def overflow_threshold(dtype: DType) -> float:
    """The least magnitude that rounds to infinity in dtype: the largest finite value
    plus half its ulp, 2^emax·(2 − 2^−p) (inf for float64, whose threshold float64 cannot
    hold: a float64 partial overflows only when float64 arithmetic does)."""
    p = _precision(dtype)
    emax = math.frexp(float(dtype.finite_max))[1] - 1
    try:
        return math.ldexp(2.0 - 2.0 ** -p, emax)
    except OverflowError:
        return math.inf


def _precision(dtype: DType) -> int:
    """p, the significand's bits (the implicit one included)."""
    return int(round(-math.log2(dtype.unit_roundoff)))


def _storage_top(dtype: DType) -> float:
    """The largest finite value of the dtype's storage (float32 for bfloat16): where
    interp.accept starts reading an interval as reaching an infinity."""
    return float(np.finfo(dtype.np).max)


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
    # Where float64 adds the terms exactly in every order (exact_sums at float64's
    # precision: the terms are multiples of one power of two, their sums fit 53 bits —
    # the common case of products of narrow floats), the vectorized sum is the exact
    # sum; only the other outputs are summed one by one with math.fsum.
    terms = _sum_terms(flat, values, bounds, size)
    s64 = terms.s64.copy()
    residual = np.zeros(size)
    rest = np.flatnonzero(~_exact_on_grid(FLOAT64, terms.grid))
    if len(rest):
        mine = np.zeros(size, dtype=bool)
        mine[rest] = True
        picked = mine[flat]
        _, groups, _ = _groups(flat[picked], values[picked], size)
        _fsum_each(s64, residual, rest, [groups[o] for o in rest])
    result = round_once(s64, residual, dtype)
    return result, _sum_bound(dtype, terms, result)


def _fsum_each(s64, residual, outputs, groups) -> None:
    """The correctly rounded float64 sum of each group (and its residual's sign) into
    s64 and residual at its output. Only outputs float64 may not add exactly come here:
    two or more terms, or a term that is not finite (an empty or one-term sum of finite
    terms is exact)."""
    for o, g in zip(outputs, groups):
        if not np.isfinite(g).all():
            with np.errstate(invalid="ignore"):  # inf − inf is NaN on purpose, as IEEE says
                s64[o] = float(np.sum(g))   # IEEE: inf + finite = inf, NaN wins
            continue
        s64[o], residual[o] = _fsum_with_residual(g.tolist())


# Sums of magnitudes are also formed scaled by 2^-_SHIFT, so that a float64 sum near
# overflow still gets a finite bound and a decided overflow side.
_SHIFT = 128


# Terms are summarized this many at a time: each chunk's float64 temporaries (a dozen
# arrays of its length) stay in the cache and are reused by the allocator, where one pass
# over a GEMV block's 4 M contributions allocated and faulted in 32 MB per temporary
# (3× the time, 300 MB).
_CHUNK = 1 << 16


@dataclass
class _SumTerms:
    """Per output, what a float sum's value and bound need of its terms: the grid
    exact_sums tests, the float64 sum (the exact sum wherever the grid says float64 adds
    exactly), the unscaled and scaled (2^-_SHIFT) raw sums of |x|+b and b, the scaled
    ones of the positive and negative sides max(x+b, 0) and max(b−x, 0), the float64 sum
    of the finite terms, and whether a term has a nonzero bound. Every field is a sum, a
    minimum or an "any" over the terms, so chunks merge in any order: a float64 sum of
    chunk sums is one more order of the same additions, which the γ(count) rounding up of
    `masses` covers as it covers any order."""
    grid: SumGrid
    s64: np.ndarray
    abs_raw: np.ndarray
    abs_raw_scaled: np.ndarray
    b_raw: np.ndarray
    b_raw_scaled: np.ndarray
    pos_raw_scaled: np.ndarray
    neg_raw_scaled: np.ndarray
    finite_sum: np.ndarray
    uncertain: np.ndarray

    def masses(self, raw, raw_scaled):
        """(Σ weights, Σ weights·2^-_SHIFT) rounded up: float64 summation of count
        nonnegative terms, in any order, is within γ(count) at 2^-53 of the exact sum,
        and the scaled terms can only lose bits below 2^-1074, which count·2^-1074
        covers."""
        up = 1 + gamma(self.grid.count, 2.0 ** -53)
        with np.errstate(all="ignore"):
            return raw * up, self.scaled(raw_scaled)

    def scaled(self, raw_scaled):
        """A scaled mass rounded up (`masses`)."""
        count = self.grid.count
        with np.errstate(all="ignore"):
            return (raw_scaled + count * 2.0 ** -1074) * (1 + gamma(count, 2.0 ** -53))


def _sum_terms(flat, values, bounds, size) -> _SumTerms:
    """The _SumTerms of the terms (flat: the output of each), chunk by chunk."""
    total = None
    for start in range(0, len(flat), _CHUNK):
        part = slice(start, start + _CHUNK)
        chunk = _chunk_terms(flat[part], values[part],
                             None if bounds is None else bounds[part], size)
        total = chunk if total is None else _merged(total, chunk)
    return total or _chunk_terms(flat, values, bounds, size)


def _chunk_terms(flat, values, bounds, size) -> _SumTerms:
    v = values.astype(np.float64)
    finite = np.isfinite(v)
    all_finite = finite.all()
    vf = v if all_finite else np.where(finite, v, 0.0)
    grid = _grid_of(flat, vf, finite, size)

    def plain(weights):
        with np.errstate(all="ignore"):
            return np.bincount(flat, weights=weights, minlength=size)

    def scaled(weights):
        with np.errstate(all="ignore"):
            return np.bincount(flat, weights=np.ldexp(weights, -_SHIFT), minlength=size)

    s64 = plain(v)
    b = np.zeros(len(v)) if bounds is None else bounds
    masses = np.abs(vf) + b
    uncertain = np.zeros(size, dtype=bool)
    if bounds is not None:
        uncertain[flat[bounds != 0]] = True
    no_b = np.zeros(size)
    return _SumTerms(grid, s64, plain(masses), scaled(masses),
                     no_b if bounds is None else plain(b),
                     no_b if bounds is None else scaled(b),
                     scaled(np.maximum(vf + b, 0.0)), scaled(np.maximum(b - vf, 0.0)),
                     s64 if all_finite else plain(vf), uncertain)


def _merged(a: _SumTerms, b: _SumTerms) -> _SumTerms:
    with np.errstate(all="ignore"):
        return _SumTerms(
            SumGrid(np.minimum(a.grid.low, b.grid.low), a.grid.positive + b.grid.positive,
                    a.grid.negative + b.grid.negative, a.grid.count + b.grid.count,
                    a.grid.nonfinite | b.grid.nonfinite),
            a.s64 + b.s64, a.abs_raw + b.abs_raw, a.abs_raw_scaled + b.abs_raw_scaled,
            a.b_raw + b.b_raw, a.b_raw_scaled + b.b_raw_scaled,
            a.pos_raw_scaled + b.pos_raw_scaled, a.neg_raw_scaled + b.neg_raw_scaled,
            a.finite_sum + b.finite_sum, a.uncertain | b.uncertain)


def _sum_bound(dtype, terms: _SumTerms, result):
    """The bound of each float sum (docs/semantics.md §9): 0 where every order is exact,
    the γ bound, widened to reach an infinity that some order can overflow to, and inf
    where nothing can be judged (γ vacuous, both signs can overflow)."""
    n = terms.grid.count
    u = dtype.unit_roundoff
    g = gamma(n, u)
    with np.errstate(all="ignore"):
        abs_sum, abs_scaled = terms.masses(terms.abs_raw, terms.abs_raw_scaled)
        b_sum, b_scaled = terms.masses(terms.b_raw, terms.b_raw_scaled)
        r = result.astype(np.float64)
        bound = (g * abs_sum + b_sum + u * np.abs(r) / (1 - u)) * _SLACK
        bound_scaled = (g * abs_scaled + b_scaled
                        + u * np.abs(np.ldexp(r, -_SHIFT)) / (1 - u)) * _SLACK
        bound = np.where(np.isfinite(abs_sum), bound, np.ldexp(bound_scaled, _SHIFT))
        up, down = _overflow_sides(dtype, terms, g, abs_scaled)
    nonfinite_terms = terms.grid.nonfinite
    exact_alone = ((n <= 1) & (b_sum == 0)) | \
        (~terms.uncertain & _exact_on_grid(dtype, terms.grid))
    # an exact output has no rounding and no overflow in any order (exact_sums)
    bound = np.where(exact_alone, 0.0, _overflow_widened(dtype, r, bound, up, down))
    # IEEE on infinite terms: inf + finite = inf in any order, unless the finite terms
    # can overflow to the other infinity first (inf − inf = NaN): then NaN is legal too
    ieee = np.where((r == np.inf) & down | (r == -np.inf) & up, np.inf, 0.0)
    bound = np.where(nonfinite_terms, ieee, bound)
    # a reference that rounded to ±inf from finite terms: some order may stay finite
    # just below the threshold, which a bound around an infinity cannot say
    s_exact = np.abs(r)
    bound = np.where(~nonfinite_terms & ~np.isfinite(s_exact) & ~np.isnan(r),
                     _every_order_overflows(dtype, terms, g, abs_sum + b_sum, up, down, r),
                     bound)
    return clean(bound)


def _overflow_sides(dtype, terms: _SumTerms, g, abs_scaled):
    """Per output: (can some order's partial sum round to +inf, to −inf). The first
    addition to overflow adds computed partials of disjoint subsets of the terms, whose
    exact sum lies within Σ max(xᵢ + bᵢ, 0) + γ(n)·Σ(|xᵢ| + bᵢ) above zero (the γ
    bound holds for every partial before any overflow); it overflows only past the
    threshold. All in the scaled masses, rounded up (_SLACK)."""
    pos = terms.scaled(terms.pos_raw_scaled)
    neg = terms.scaled(terms.neg_raw_scaled)
    thr = overflow_threshold(dtype)
    thr_scaled = math.ldexp(2.0 - 2.0 ** -_precision(dtype),
                            math.frexp(float(dtype.finite_max))[1] - 1 - _SHIFT) \
        if math.isinf(thr) else math.ldexp(thr, -_SHIFT)
    with np.errstate(all="ignore"):
        reach = g * abs_scaled
        return (pos + reach) * _SLACK >= thr_scaled, (neg + reach) * _SLACK >= thr_scaled


def _overflow_widened(dtype, r, bound, up, down):
    """The bound widened so that interp.accept takes the infinity an order can reach:
    up to the storage's largest finite value on that side; inf when both sides can
    (then ±inf and NaN are all legal: nothing can be judged), or when the dtype
    saturates (float8: a saturated partial is finite and the order goes on from it)."""
    if dtype.saturates:
        return np.where(up | down, np.inf, bound)
    top = _storage_top(dtype)
    finite = np.isfinite(r)
    with np.errstate(all="ignore"):
        widened = np.where(up, np.maximum(bound, top - r), bound)
        widened = np.where(down, np.maximum(widened, top + r), widened)
    widened = np.where(up & down, np.inf, widened)
    return np.where(finite, widened, bound)


def _every_order_overflows(dtype, terms: _SumTerms, g, abs_sum, up, down, r):
    """For a reference that rounded to ±inf from finite terms: 0 where every order
    overflows to that infinity too (the exact sum minus the γ bound is still past the
    threshold, and the other sign cannot overflow), else inf (not judged). abs_sum:
    Σ(|xᵢ| + bᵢ) + Σbᵢ, which covers the contributions' own uncertainty too."""
    thr = overflow_threshold(dtype)
    if math.isinf(thr):           # float64: no finite sum to measure against
        return np.full(len(r), np.inf)
    exact64 = terms.finite_sum    # within γ(n) at 2^-53, in any order
    n = terms.grid.count
    with np.errstate(all="ignore"):
        slack = gamma(n, 2.0 ** -53) * abs_sum
        low = (np.abs(exact64) - slack - g * abs_sum) / _SLACK
    other = np.where(r > 0, down, up)
    return np.where((low >= thr) & ~other & (np.sign(exact64) == np.sign(r)), 0.0, np.inf)


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
    sorted_flat = flat[order]
    finite_terms = np.bincount(sorted_flat, weights=(~np.isfinite(mags)).astype(float),
                               minlength=size) == 0
    zero_term = np.bincount(sorted_flat, weights=(mags == 0).astype(float),
                            minlength=size) > 0
    over, under = _leaves_range(dtype, sorted_flat, np.where(np.isfinite(mags), mags + b, 0.0),
                                size)
    leaves = over | under
    exact_alone = ((n <= 1) & ~b_any) | \
        (~leaves & ~b_any & _odd_parts_fit(dtype, flat, values, size))
    r = result.astype(np.float64)
    # An order that overflows gives the exact product's sign times inf (no term is 0 and
    # no partial underflows, so no inf × 0): that infinity is legal, the rest of the
    # orders keep every partial normal and the γ bound holds for them.
    top = _storage_top(dtype)
    with np.errstate(all="ignore"):
        to_inf = np.where(r > 0, np.maximum(bound, top - r), np.maximum(bound, top + r))
    # (a float8 partial saturates instead: that order is not judged)
    judged_over = over & ~under & ~zero_term & np.isfinite(r) & (n > 1) & \
        (not dtype.saturates)
    bound = np.where(leaves & (n > 1), np.inf, bound)
    bound = np.where(judged_over, to_inf, bound)
    bound = np.where(exact_alone, 0.0, bound)
    # infinite terms follow IEEE in any order, unless a partial of the finite ones can
    # underflow to 0 first (inf × 0 = NaN)
    bound = np.where(~finite_terms, np.where(under, np.inf, 0.0), bound)
    return result, clean(bound)


def _leaves_range(dtype, flat, mags, size) -> tuple[np.ndarray, np.ndarray]:
    """Per output: (whether some order of its terms can overflow a partial product,
    whether one can underflow it below the normal range) where the exact product need
    not. The γ bound of a product assumes every partial product stays normal; 0..95
    multiplied 1..95 first overflows float32 to inf and inf × 0 is NaN, tiny × tiny
    underflows to 0 before × huge. A partial product's magnitude lies between the
    product of the terms below 1 and the product of those above 1 (in log2, so the test
    itself cannot overflow)."""
    nonzero = mags > 0
    with np.errstate(divide="ignore"):
        logs = np.where(nonzero, np.log2(np.where(nonzero, mags, 1.0)), 0.0)
    high = np.bincount(flat, weights=np.maximum(logs, 0.0), minlength=size)
    low = np.bincount(flat, weights=np.minimum(logs, 0.0), minlength=size)
    # one bit of margin for the roundings on the way
    return (high >= np.log2(dtype.finite_max) - 1), \
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
    if dtype.bits < 32:
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


@dataclass(frozen=True)
class SumGrid:
    """What exact_sums needs of a sum's terms, whatever the dtype: per output, the least
    exponent of any term's lowest set bit (`low`; a huge value when all are zero), the
    sums of the positive terms and of the negative terms' magnitudes (float64), the
    count, and whether a term is not finite. Made once per sum (`sum_grid`), asked at
    several precisions."""
    low: np.ndarray
    positive: np.ndarray
    negative: np.ndarray
    count: np.ndarray
    nonfinite: np.ndarray

    _NONE = np.iinfo(np.int64).max




def sum_grid(flat: np.ndarray, values: np.ndarray, size: int) -> SumGrid:
    return _sum_terms(flat, values, None, size).grid


def _grid_of(flat, vf, finite, size) -> SumGrid:
    """The SumGrid of one chunk: vf the terms with non-finite ones zeroed."""
    nonfinite = np.zeros(size, dtype=bool)
    if not finite.all():
        nonfinite[flat[~finite]] = True
    odd, exp = _binary_parts(vf)
    low = np.full(size, SumGrid._NONE, dtype=np.int64)
    np.minimum.at(low, flat, np.where(odd > 0, exp, SumGrid._NONE))
    with np.errstate(over="ignore"):
        positive = np.bincount(flat, weights=np.maximum(vf, 0.0), minlength=size)
        negative = np.bincount(flat, weights=np.maximum(-vf, 0.0), minlength=size)
    return SumGrid(low, positive, negative, np.bincount(flat, minlength=size), nonfinite)


def exact_sums(dtype: DType, flat: np.ndarray, values: np.ndarray,
               bounds: np.ndarray | None, size: int) -> np.ndarray:
    """Per output: whether its float sum is exact in every order (docs/semantics.md §9
    has the proof). It is when its terms are exact (bound 0), finite, all multiples of
    g = 2^e (e the least exponent of any term's lowest set bit), and the sum P of its
    positive terms and the sum N of the magnitudes of its negative ones both satisfy
    max(P, N) ≤ 2^p·g (p the significand's bits) and ≤ the largest finite value. Every
    partial sum of every order is then the exact sum of a subset: a multiple m·g with
    −N ≤ m·g ≤ P, so |m| ≤ 2^p, which the dtype holds (g is at least the dtype's least
    subnormal, since the terms are its values). No addition rounds, by induction."""
    out = np.ones(size, dtype=bool)
    if len(flat) == 0:
        return out
    if bounds is not None and (bounds != 0).any():
        out[flat[bounds != 0]] = False
    return out & _exact_on_grid(dtype, sum_grid(flat, values, size))


def _exact_on_grid(dtype: DType, grid: SumGrid) -> np.ndarray:
    """exact_sums' test of finite exact terms at dtype's precision, from their grid
    (asked at several precisions of one grid)."""
    p = _precision(dtype)
    # The float64 sums are themselves rounded. Below float64's precision they need no
    # widening: while the exact partial stays ≤ 2^p·g < 2^53·g float64 adds multiples of
    # g exactly, and once it passes 2^p·g the rounded sum (monotone, 2^p·g a float64)
    # cannot fall back to it, so the test below decides the exact sum. float64 itself
    # widens by γ(n) at 2^-53.
    widen = (1 + gamma(grid.count, 2.0 ** -53)) * _SLACK if p >= 53 else 1.0
    with np.errstate(over="ignore"):
        side = np.maximum(grid.positive * widen, grid.negative * widen)
        fits = (grid.low == SumGrid._NONE) | \
            (side <= np.ldexp(1.0, np.minimum(grid.low + p, 2000)))
    return ~grid.nonfinite & fits & (side <= float(dtype.finite_max))


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
