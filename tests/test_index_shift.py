"""spec.indexexpr.linear_in: the simulator evaluates a copy's lowered index expressions
once with the uniform names at 0 and shifts them (interp.sim_copies.index_values). The
claim e = e[names := 0] + Σ c·name is checked here against full evaluation, and every
expression that reads a name inside a division, a modulo or a product is refused."""
from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from verify_reducer.spec.indexexpr import Const, FloorDiv, Mod, Mul, Var, linear_in

i, j, ko, bx = Var("i"), Var("j"), Var("ko"), Var("bx")


def test_affine_names_get_their_coefficients():
    e = (i // 4) * 256 + (j % 64) + ko * 256 + bx * 64 * 65536 + 3
    assert dict(linear_in(e, {"ko", "bx"})) == {"ko": 256, "bx": 64 * 65536}
    assert linear_in(i * 2 + j, {"ko"}) == ()          # reads none of them


def test_a_name_under_a_division_modulo_or_product_is_refused():
    assert linear_in(FloorDiv(ko * 3 + i, 64), {"ko"}) is None
    # the simplifying constructor takes out what divides exactly: then ko is affine
    assert linear_in((ko * 256 + i) // 64, {"ko"}) == (("ko", 4),)
    assert linear_in(Mod(ko + i, 2), {"ko"}) is None
    assert linear_in(Mul(ko, i), {"ko"}) is None
    assert linear_in(FloorDiv(ko, 2) + i, {"ko"}) is None


_ATOMS = st.sampled_from([i, j, ko, bx, Const(3), Const(-2)])


def _exprs():
    return st.recursive(_ATOMS, lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] + t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] - t[1]),
        st.tuples(st.integers(-5, 5), inner).map(lambda t: Mul(Const(t[0]), t[1])),
        st.tuples(inner, inner).map(lambda t: Mul(t[0], t[1])),
        st.tuples(inner, st.integers(1, 9)).map(lambda t: FloorDiv(t[0], t[1])),
        st.tuples(inner, st.integers(1, 9)).map(lambda t: Mod(t[0], t[1]))), max_leaves=8)


@given(_exprs(), st.integers(-50, 50), st.integers(-50, 50))
def test_the_shift_is_exact_wherever_it_is_claimed(e, k, b):
    coefficients = linear_in(e, {"ko", "bx"})
    loop = {"i": np.arange(-20, 20), "j": np.arange(40)[::-1]}
    full = np.broadcast_to(e.evaluate({**loop, "ko": k, "bx": b}), (40,))
    if coefficients is None:
        return
    base = np.broadcast_to(e.evaluate({**loop, "ko": 0, "bx": 0}), (40,))
    values = {"ko": k, "bx": b}
    assert np.array_equal(full, base + sum(c * values[n] for n, c in coefficients))
