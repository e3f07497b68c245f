"""The index expression language: numpy, Z3 and C agree on every expression, and the
simplifier keeps meaning while folding the obvious cases."""
import ast

import numpy as np
import pytest
import z3
from hypothesis import given, settings, strategies as st

from verify_reducer.spec.indexexpr import (Add, Const, FloorDiv, Mod, Mul, Sub, Var, add, floordiv, mod,
                            mul, sub, var)

NAMES = ("a", "b", "c")


def exprs():
    leaves = st.one_of(st.integers(-20, 40).map(Const), st.sampled_from(NAMES).map(Var))

    def grow(children):
        divisor = st.integers(1, 9)
        return st.one_of(
            st.tuples(children, children).map(lambda p: p[0] + p[1]),
            st.tuples(children, children).map(lambda p: p[0] - p[1]),
            st.tuples(children, st.integers(-5, 9)).map(lambda p: p[0] * p[1]),
            st.tuples(children, children).map(lambda p: mul(p[0], p[1])),
            st.tuples(children, divisor).map(lambda p: p[0] // p[1]),
            st.tuples(children, divisor).map(lambda p: p[0] % p[1]),
        )
    return st.recursive(leaves, grow, max_leaves=8)


def c_eval(text: str, env: dict[str, int]) -> int:
    """A tiny reference for the C subset to_c emits: int literals, names, + - * and
    C's truncating / and %."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        a, b = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)   # truncation
        return q if isinstance(node.op, ast.Div) else a - b * q
    return ev(ast.parse(text, mode="eval"))


def z3_eval(e, env, bits=None) -> int:
    if bits is None:
        terms = {n: z3.IntVal(v) for n, v in env.items()}
        return z3.simplify(e.to_z3(terms)).as_long()
    terms = {n: z3.BitVecVal(v, bits) for n, v in env.items()}
    return z3.simplify(e.to_z3(terms)).as_signed_long()


values = st.fixed_dictionaries({n: st.integers(0, 200) for n in NAMES})


@given(exprs(), values)
def test_numpy_z3_and_c_agree_on_non_negative_values(e, env):
    want = int(e.evaluate(env))
    assert z3_eval(e, env) == want
    assert z3_eval(e, env, bits=32) == want
    safe_ranges = {n: (-10**9, 10**9) for n in NAMES}       # forces the exact floor forms
    assert c_eval(e.to_c(ranges=safe_ranges), env) == want
    if all(isinstance(x, (Var, Const)) or x.a.bounds(default=(0, float("inf")))[0] >= 0
           for x in _floor_nodes(e)):
        assert c_eval(e.to_c(), env) == want               # plain / and % suffice


@given(exprs(), st.fixed_dictionaries({n: st.integers(-60, 60) for n in NAMES}))
def test_negative_values_render_safely_when_ranges_say_so(e, env):
    ranges = {n: (-60, 60) for n in NAMES}
    assert c_eval(e.to_c(ranges=ranges), env) == int(e.evaluate(env))
    assert z3_eval(e, env) == int(e.evaluate(env))


def _floor_nodes(e):
    if isinstance(e, (FloorDiv, Mod)):
        yield e
        yield from _floor_nodes(e.a)
    elif isinstance(e, (Add, Sub, Mul)):
        yield from _floor_nodes(e.a)
        yield from _floor_nodes(e.b)


@given(exprs(), st.fixed_dictionaries({n: st.integers(0, 12) for n in NAMES}),
       st.fixed_dictionaries({n: st.integers(0, 12) for n in NAMES}))
def test_simplify_with_ranges_keeps_values_inside_the_ranges(e, lo, width):
    ranges = {n: (lo[n], lo[n] + width[n] % 5) for n in NAMES}
    simple = e.simplify(ranges)
    grid = np.meshgrid(*(np.arange(ranges[n][0], ranges[n][1] + 1) for n in NAMES),
                       indexing="ij")
    env = dict(zip(NAMES, grid))
    assert np.array_equal(np.broadcast_to(simple.evaluate(env), grid[0].shape),
                          np.broadcast_to(e.evaluate(env), grid[0].shape))


@settings(max_examples=30)
@given(exprs(), values)
def test_substitution_is_evaluation(e, env):
    closed = e.substitute(env)
    assert isinstance(closed, Const) and closed.value == int(e.evaluate(env))


# ----------------------------------------------------------------------------- simplification

def test_obvious_cases_fold():
    x, y = var("x"), var("y")
    assert x * 1 == x and 1 * x == x and x + 0 == x and 0 + x == x and x - 0 == x
    assert x * 0 == Const(0)
    assert Const(6) * 7 == Const(42) and Const(-7) // 2 == Const(-4) and Const(-7) % 2 == Const(1)
    assert x // 1 == x and x % 1 == Const(0)
    assert (x * 8) // 8 == x and (8 * x) % 8 == Const(0)
    assert (x * 16) // 8 == 2 * x
    assert (8 * x + y) // 8 == x + y // 8           # exact under floor semantics
    assert (8 * x + y) % 8 == y % 8
    assert (x // 4) // 2 == x // 8
    assert (x % 16) % 4 == x % 4
    assert 8 * (x // 8) + x % 8 == x
    assert x - x == Const(0) and (x + y) - y == x


def test_range_aware_rules():
    j, rep, i = var("j"), var("rep"), var("i")
    assert floordiv(j, 128, {"j": (0, 7)}) == Const(0)
    assert mod(j, 128, {"j": (0, 7)}) == j
    assert mod(64 * i + rep, 128, {"rep": (0, 63)}) == 64 * (i % 2) + rep
    assert floordiv(64 * i + rep, 128, {"rep": (0, 63)}) == i // 2
    assert (96 * i + j).simplify({"i": (0, 0)}) == j


def test_printing_is_readable():
    j, rep, i = var("j"), var("rep"), var("i")
    assert str(8 * rep + j) == "8*rep + j"
    assert str(rep * 8 + j) == "8*rep + j"
    assert str((4 * i + j) % 128) == "(4*i + j) % 128"
    assert str(j - 2 * i - 3) == "j - 2*i - 3"
    assert str(8 * (rep // 8)) == "8*(rep // 8)"
    assert str(mul(i, j + 1)) == "i*(j + 1)"


def test_c_rendering_uses_names_and_plain_ops_for_non_negative_numerators():
    j, rep = var("j"), var("rep")
    e = (8 * rep + j) % 128
    assert e.to_c({"rep": "r", "j": "threadIdx.x % 8"}) == "(8*r + (threadIdx.x % 8)) % 128"
    assert (j - 1) // 4 == (j + 3) // 4 - 1          # the simplifier lifts the constant
    assert "((" in sub(j, var("k")).__floordiv__(4).to_c()   # j - k may be negative


def test_divisor_must_be_a_positive_constant():
    with pytest.raises(ValueError):
        var("x") // 0
    with pytest.raises(ValueError):
        var("x") % -2
    with pytest.raises(TypeError):
        add(var("x"), 1.5)
