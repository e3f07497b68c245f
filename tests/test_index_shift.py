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


# ------------------------------------------------------------------ the simulator's side

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from verify_reducer.codegen.plan import plan_func  # noqa: E402
from verify_reducer.interp import sim_copies  # noqa: E402
from verify_reducer.interp.sim_copies import Moves, _Template  # noqa: E402
from verify_reducer.interp.simulate import simulate  # noqa: E402
from verify_reducer.spec.frontend import parse_file  # noqa: E402
from verify_reducer.verify.oracle.inputs import prepare  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# the examples, and the valid programs that pipeline a loop (T.gemm's own simulation is
# interp.sim_gemm's: no copy moves there)
PROGRAMS = sorted(ROOT.glob("examples/*.py")) + \
    [p for p in sorted(ROOT.glob("tests/programs/valid/*.py"))
     if "T.Pipelined" in p.read_text() and "T.gemm" not in p.read_text()]


def _run(path: Path, planner: str):
    func = parse_file(str(path)).func()
    result = simulate(plan_func(func, planner), prepare(func, 0))
    return ({n: v.tobytes() for n, v in result.outputs.items()},
            [(d.code, d.message) for d in result.violations], result.contributions)


@pytest.mark.parametrize("planner", ["canonical", "auto"])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_shifted_moves_equal_moves_derived_in_full(monkeypatch, path, planner):
    """Every copy's moves derived in full at every start (no template) give the same
    outputs, violations and contribution count as the shifted ones."""
    shifted = _run(path, planner)
    monkeypatch.setattr(_Template, "applies", staticmethod(lambda *a: False))
    monkeypatch.setattr(sim_copies.CopyExecution, "index_parts", _unshifted)
    assert _run(path, planner) == shifted


_index_parts = sim_copies.CopyExecution.index_parts


def _unshifted(self, *args):
    """index_parts with every expression evaluated in full (no shift claimed)."""
    parts, shifts, full = _index_parts(self, *args)
    return parts, [None] * len(shifts), full


def test_a_shift_that_leaves_a_buffer_falls_back_to_the_full_derivation():
    moves = Moves(np.arange(4), np.arange(10, 14), None, None, slice(0, 4), np.arange(4))
    t = _Template((0, 0), moves, (1,), (1,), (10, 13, 20), (0, 3, 8))
    again = t.at((5, 4))
    assert again.src.tolist() == [15, 16, 17, 18] and again.dst == slice(4, 8)
    assert t.at((6, 0)).src.tolist() == [16, 17, 18, 19]    # the last one inside
    assert t.at((7, 0)) is None         # src would reach 20: outside its 20
    assert t.at((0, 5)) is None         # dst would reach 8: outside its 8
    assert t.at((-11, 0)) is None       # src below 0
    assert t.at((None, 0)) is None      # not affine at this start
