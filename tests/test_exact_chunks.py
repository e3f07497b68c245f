"""A float sum of many contributions is summarized chunk by chunk (interp.exact._CHUNK):
the result must still be the exact sum rounded once, the bound must still cover every
order, and an answer split over chunks must equal the one-chunk answer. The window
comparison judges only written elements (interp.accept.judge) and must say what the
whole-tensor judgment says there."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from verify_reducer.interp import exact
from verify_reducer.interp.accept import judge, judgeable, overflow_sides, within_bound
from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.ops import MONOIDS
from test_interp_logical import round_fraction

SUM = MONOIDS["sum"]


def _terms(rng, n, size, kind):
    flat = rng.integers(0, size, n)
    if kind == "narrow":            # products of ±1/2, ±1: exact in every order
        v = rng.choice([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0], n)
    else:                           # spread magnitudes: float64 does not add them exactly
        v = rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)
    return flat, v


@pytest.mark.parametrize("kind", ["narrow", "spread"])
def test_a_sum_over_many_chunks_is_the_exact_sum_rounded_once(kind):
    rng = np.random.default_rng(7)
    size = 3
    flat, v = _terms(rng, 3 * exact._CHUNK + 123, size, kind)
    vals = np.float32(v)
    got, bound, counts = exact.combine(SUM, DTYPES["float32"], flat, vals, None, size)
    assert counts.tolist() == np.bincount(flat, minlength=size).tolist()
    for o in range(size):
        terms = vals[flat == o].astype(np.float64).tolist()
        want = round_fraction(sum(map(Fraction, terms), Fraction(0)), DTYPES["float32"])
        assert float(got[o]) == want
        # the bound covers the float32 sum in the order the terms arrived
        seq = np.float32(0)
        for t in np.float32(terms):
            seq = np.float32(seq + t)
        assert abs(float(seq) - want) <= bound[o]
        if kind == "narrow":
            assert bound[o] == 0      # every order is exact: judged exactly


@pytest.mark.parametrize("with_bounds", [False, True])
def test_chunked_equals_one_chunk(monkeypatch, with_bounds):
    """The same terms, summarized at once and in chunks of 1000: the same results, the
    same exact outputs, bounds equal to within the rounding of the masses' float64
    sums (another order of the same additions)."""
    d = DTYPES["float32"]
    rng = np.random.default_rng(3)
    flat, v = _terms(rng, 50_000, 17, "spread")
    vals = np.float32(v)
    vals[::997] = np.inf
    bounds = np.abs(rng.standard_normal(len(vals))) * 1e-6 if with_bounds else None
    seed = np.float32(rng.standard_normal(17))
    whole = exact.combine(SUM, d, flat, vals, bounds, 17, seed)
    monkeypatch.setattr(exact, "_CHUNK", 1000)
    parts = exact.combine(SUM, d, flat, vals, bounds, 17, seed)
    assert np.array_equal(whole[0], parts[0], equal_nan=True)
    assert np.array_equal(whole[2], parts[2])
    a, b = whole[1], parts[1]
    assert np.array_equal(a == 0, b == 0) and np.array_equal(np.isinf(a), np.isinf(b))
    finite = np.isfinite(a) & (a > 0)
    assert np.allclose(a[finite], b[finite], rtol=1e-12, atol=0)


def test_judge_on_written_elements_matches_the_whole_judgment():
    rng = np.random.default_rng(5)
    shape = (40, 30)
    ref = np.float32(rng.standard_normal(shape))
    ref[0, :3] = [np.inf, 3e38, -3e38]
    bound = np.abs(rng.standard_normal(shape)) * 1e-3
    bound[0, 1:3] = 1e38                      # an order may overflow to ±inf there
    bound[1, 0] = np.inf                      # not judged
    got = ref + np.float32(rng.standard_normal(shape) * 2e-3)
    got[0, 1] = np.inf
    where = rng.random(shape) < 0.3
    where[:2, :3] = True
    accepted, unjudged, overflow = judge(got, ref, bound, where)
    up, down = overflow_sides(ref, bound)
    want_unjudged = ~judgeable(ref, bound)
    assert np.array_equal(accepted, within_bound(got, ref, bound) | ~where)
    assert np.array_equal(unjudged, want_unjudged & where)
    assert np.array_equal(overflow, (up | down) & ~want_unjudged & where)
    assert not accepted.all() and unjudged.any() and overflow.any()
    nothing = judge(got, ref, bound, np.zeros(shape, bool))
    assert nothing[0].all() and not nothing[1].any() and not nothing[2].any()
    with pytest.raises(ValueError, match="does not match"):
        judge(got[:3], ref, bound, where)


def test_judge_of_every_element_in_slabs_matches_the_whole_judgment(monkeypatch):
    """where=None judges a slab of rows at a time (interp.accept._JUDGED_AT_ONCE): the
    same answer as one pass, for slabs that do not divide the rows, and for a 0-d
    tensor."""
    from verify_reducer.interp import accept
    rng = np.random.default_rng(9)
    shape = (13, 5)
    ref = np.float32(rng.standard_normal(shape))
    ref[2, 1] = 3e38
    bound = np.abs(rng.standard_normal(shape)) * 1e-3
    bound[2, 1] = 1e38
    bound[7, 4] = np.inf
    got = ref + np.float32(rng.standard_normal(shape) * 2e-3)
    got[2, 1] = np.inf
    whole = judge(got, ref, bound)
    monkeypatch.setattr(accept, "_JUDGED_AT_ONCE", 11)       # two rows a slab, 7 slabs
    slabs = judge(got, ref, bound)
    for a, b in zip(whole, slabs):
        assert np.array_equal(a, b)
    assert not whole[0].all() and whole[1][7, 4] and whole[2][2, 1]
    scalar = judge(np.float32(1.5), np.float32(1.0), 0.25)
    assert [bool(x) for x in scalar] == [False, False, False]
    assert bool(judge(np.float32(1.1), np.float32(1.0), 0.25)[0])
