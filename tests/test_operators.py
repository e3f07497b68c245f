"""The one operator table (spec.operators) and the one visitor protocol.

(1) Every consumer of expressions handles every IR node type and every row of the table:
the visitors each define one method per node type, and each row carries the columns its
consumers read (a consumer that approximates an operator says so in a declared set,
checked here). (2) A row changed in the table changes the interpreter, the Z3 encodings
and the rendered CUDA together: no consumer keeps a private copy of an operator's
meaning. (3) The columns of a row agree with each other: numpy, exact, Z3 and the
interval rule give the same integers."""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import z3

from verify_reducer.codegen import cuda_exprs
from verify_reducer.codegen.cuda_exprs import ExprRenderer, convert, intrinsic, C
from verify_reducer.codegen.cuda_warp import WarpExprRenderer
from verify_reducer.interp.evaluate import Evaluator, evaluate
from verify_reducer.interp.values import Lanes
from verify_reducer.spec import ir, operators as O
from verify_reducer.spec import user_ops as U
from verify_reducer.spec.dtypes import BOOL, DTYPES, FLOAT32, INT32
from verify_reducer.spec.intrinsics import INTRINSICS
from verify_reducer.spec.source import Span
from verify_reducer.spec.warp import CUDA_NAMES, WARP_REDUCES
from verify_reducer.verify.epochs import bounds
from verify_reducer.verify.oracle import blocks

SPAN = Span(1, 0, 1, 1)

# every consumer's visitor, by what it computes
VISITORS = {
    "interpreter": Evaluator,
    "CUDA renderer": ExprRenderer,
    "CUDA renderer (warp builtins)": WarpExprRenderer,
    "R209 intervals": bounds._Intervals,
    "R209 Z3 terms": bounds._Terms,
    "R209 Z3 conditions": bounds._Conditions,
    "per-block spans": blocks._Spans,
    "user-op numpy": U._Numpy,
    "user-op C": U._CNode,
    "user-op Z3": U._Z3Node,
}

# Operators a consumer deliberately does not follow exactly, with how it stays sound:
# the Z3 integer terms take any value of the interval, the interval rules the dtype's
# range (a comparison or logical op is 0..1 by its node type).
Z3_INT_APPROXIMATED = {"|", "^", "not", "invert", "and", "or"}
INTERVAL_WHOLE_RANGE = {"|", "^", "not", "invert", "<", "<=", ">", ">=", "==", "!=",
                        "and", "or"}
# the operators a declared reducer op may use (spec.user_ops), all bit-vector encoded
USER_OP_ROWS = set(U.ARITHMETIC + U.BITWISE + U.SHIFTS + U.COMPARISONS) | \
    {"and", "or", "neg", "invert", "not"}


@pytest.mark.parametrize("consumer", VISITORS)
def test_every_consumer_handles_every_node_type(consumer):
    handled = VISITORS[consumer].handled()
    missing = [t.__name__ for t in O.NODE_TYPES if not handled[t]]
    assert not missing, f"the {consumer} has no method for {missing}"


def test_the_user_op_nodes_are_walked_by_the_same_protocol():
    handled = U._Numpy.handled()
    for node_type in (U.Param, U.Lit, U.UnaryOp, U.BinaryOp, U.CompareOp, U.LogicalOp,
                      U.SelectOp, U.ExtremumOp, U.CastOp):
        assert handled[node_type], node_type.__name__


def test_the_ir_has_no_node_type_the_protocol_misses():
    assert set(O.NODE_TYPES) == set(ir.Expr.__args__)


def test_the_table_covers_the_ir_operators():
    assert set(ir.BINARY_OPS) | set(ir.COMPARE_OPS) | {"and", "or"} == set(O.OPERATORS)
    assert set(O.UNARY_OPERATORS) == {"neg", "not", "invert"}


@pytest.mark.parametrize("name", [*O.OPERATORS, *O.UNARY_OPERATORS])
def test_every_row_has_what_its_consumers_read(name):
    row = O.OPERATORS.get(name) or O.UNARY_OPERATORS[name]
    assert row.ints is not None and row.exact is not None, "interpreter / exact meaning"
    assert row.c is not None or row.c_function is not None, "CUDA spelling"
    if row.floats is not None:
        assert row.c_float is not None, "the float form's CUDA spelling"
        if row.kind != O.COMPARE:     # a comparison's bound is its operands' overlap
            assert row.error_rule is not None, "the float form's error bound"
    if row.kind == O.COMPARE:
        assert row.truth is not None, "per-block truth"
    assert row.z3_int is not None or name in Z3_INT_APPROXIMATED, "Z3 integer term"
    assert row.interval is not None or name in INTERVAL_WHOLE_RANGE, "interval rule"
    if name in USER_OP_ROWS:
        assert row.z3_bv is not None, "bit-vector encoding (user-op laws)"


def test_every_cast_kind_is_spelled_and_evaluated():
    seen = set()
    for src, dst in itertools.product(DTYPES.values(), repeat=2):
        kind = O.cast_kind(src, dst)
        seen.add(kind)
        assert kind in cuda_exprs.C_CASTS
        text = convert(C("x"), src, dst).text
        assert text
        values = O.convert_array(src.quantize(np.array([0.0, 1.0, 3.0])), dst)
        assert len(values) == 3
        if not src.is_float and not dst.is_float:      # a declared op's casts
            assert O.CASTS[kind].z3_bv is not None, kind
    assert seen == set(O.CASTS)


@pytest.mark.parametrize("name", list(O.CALLS))
def test_every_reserved_call_has_its_meanings(name):
    if name in INTRINSICS:
        row = INTRINSICS[name]
        assert row.numpy is not None
        assert intrinsic(name, [C("x")] * row.arity, FLOAT32).text
        if not row.float_only:
            assert row.numpy_int is not None
            assert intrinsic(name, [C("x")] * row.arity, INT32).text
            if row.arity == 2:      # max/min: the integer analyses follow them exactly
                assert row.interval is not None and row.z3_int is not None
                for a, b in itertools.product(range(-3, 4), repeat=2):
                    want = int(row.numpy_int(a, b))
                    assert z3.simplify(row.z3_int(z3.IntVal(a), z3.IntVal(b))).as_long() \
                        == want
                    assert row.interval((a, a), (b, b)) == (want, want)
    elif name == "reinterpret":
        assert O.CALLS[name].refusal(FLOAT32, DTYPES["int32"]) is None
    else:
        assert name in CUDA_NAMES or name in WARP_REDUCES


# ----------------------------------------------------------------------------- (2)

def _interp(e: ir.Expr):
    return evaluate(e, Lanes(1, {}), None).v[0]


def _z3(e: ir.Expr):
    enc = bounds._Encoder(None)
    return z3.simplify(enc.term(e)).as_long()


def _cuda(e: ir.Expr) -> str:
    return ExprRenderer(lambda name: name, lambda load: C("?")).render(e).text


def test_an_operator_changed_in_the_table_changes_every_consumer(monkeypatch):
    """`//` made to mean C's truncating `/`: the interpreter, the Z3 encoding of index
    proofs and the CUDA all follow the one row."""
    const = ir.Binary("//", ir.Const(-7, INT32, SPAN), ir.Const(2, INT32, SPAN), INT32,
                      SPAN)
    symbolic = ir.Binary("//", ir.Var("a", SPAN), ir.Var("b", SPAN), INT32, SPAN)
    assert (_interp(const), _z3(const)) == (-4, -4)
    assert _cuda(symbolic) == "reducer_floordiv<int>(a, b)"

    monkeypatch.setitem(O.OPERATORS, "//", replace(O.OPERATORS["/"], name="//"))
    assert (_interp(const), _z3(const)) == (-3, -3)
    assert _cuda(symbolic) == "a / b"


def test_a_user_op_reads_the_same_rows(monkeypatch):
    """A declared op's numpy, C and Z3 faces follow the table too."""
    i32 = DTYPES["int32"]
    body = U.BinaryOp("^", U.Param(0, i32), U.Param(1, i32), i32)
    a, b = np.array([6], np.int32), np.array([3], np.int32)
    x, y = z3.BitVecVal(6, 32), z3.BitVecVal(3, 32)
    assert U.evaluate(body, a, b)[0] == 5
    assert z3.simplify(U.encode(body, x, y)).as_long() == 5
    assert "^" in U.c_body(body, ("a", "b"))[0]

    monkeypatch.setitem(O.OPERATORS, "^", replace(O.OPERATORS["|"], name="^"))
    assert U.evaluate(body, a, b)[0] == 7
    assert z3.simplify(U.encode(body, x, y)).as_long() == 7
    assert "|" in U.c_body(body, ("a", "b"))[0]


# ----------------------------------------------------------------------------- (3)

def _operands(row):
    if row.domain == "shift":
        return itertools.product(range(-9, 10), range(0, 6))
    if row.domain == "divisor":
        return itertools.product(range(-9, 10), [b for b in range(-4, 5) if b])
    return itertools.product(range(-9, 10), range(-4, 5))


@pytest.mark.parametrize("name", [n for n, r in O.OPERATORS.items()
                                  if r.kind == O.BINARY])
def test_the_columns_of_a_row_agree(name):
    """numpy on int64 storage, the exact Python meaning, the Z3 integer term and the
    interval rule (with the divisor, shift or mask a constant) give one answer."""
    row = O.OPERATORS[name]
    for a, b in _operands(row):
        want = row.exact(a, b)
        got = row.ints(np.array([a], np.int64), np.array([b], np.int64))[0]
        assert got == want, (name, a, b)
        facts: list = []
        term = row.z3_int(z3.IntVal(a), z3.IntVal(b), b, facts) if row.z3_int else None
        if term is not None and (name != "&" or b >= 0):
            assert z3.simplify(term).as_long() == want, (name, a, b)
        if row.interval is not None:
            found = row.interval((a - 3, a), (b, b), b)
            if found is not None:
                results = [row.exact(x, b) for x in range(a - 3, a + 1)]
                assert found[0] <= min(results) and max(results) <= found[1], (name, a, b)


def test_the_interval_rules_take_arrays_as_the_block_spans_do():
    lo, hi = np.array([-5.0, 0.0]), np.array([-1.0, 7.0])
    for name in ("+", "-", "*", "/", "//", "%", "<<", ">>"):
        row = O.OPERATORS[name]
        found = row.interval((lo, hi), (np.array([2.0, 2.0]),) * 2, 2)
        scalar = [row.interval((lo[i], hi[i]), (2, 2), 2) for i in range(2)]
        for i in range(2):
            assert (found[0][i], found[1][i]) == tuple(map(float, scalar[i])), name


def test_comparison_truth_agrees_with_the_comparison():
    for name, row in O.OPERATORS.items():
        if row.kind != O.COMPARE:
            continue
        for lo, hi in [(-3, -1), (0, 0), (1, 4), (-2, 2)]:
            always, never = row.truth(lo, hi)
            results = {row.exact(d, 0) for d in range(lo, hi + 1)}
            assert always == (results == {True}), (name, lo, hi)
            assert never == (results == {False}), (name, lo, hi)


def test_logical_rows_short_circuit_on_their_deciding_value():
    assert O.OPERATORS["and"].decides is False and O.OPERATORS["or"].decides is True
    for name in ("and", "or"):
        row = O.OPERATORS[name]
        for rest in (False, True):
            assert row.exact(row.decides, rest) == row.decides


def test_bool_negation_is_the_bool():
    assert O.UNARY_OPERATORS["neg"].ints(np.array([True]))[0]
    assert BOOL.quantize(O.UNARY_OPERATORS["not"].ints(np.array([True])))[0] == False  # noqa: E712


# ----------------------------------------------------------------------------- every row,
# through every consumer

def _node(name: str, dtype):
    a, b = ir.Const(7, dtype, SPAN), ir.Const(2, dtype, SPAN)
    if name in O.UNARY_OPERATORS:
        return ir.Unary(name, a, BOOL if name == "not" else dtype, SPAN)
    row = O.OPERATORS[name]
    if row.kind == O.COMPARE:
        return ir.Compare(name, a, b, SPAN)
    if row.kind == O.LOGICAL:
        return ir.Logical(name, ir.Const(True, BOOL, SPAN), ir.Const(False, BOOL, SPAN),
                          SPAN)
    return ir.Binary(name, a, b, dtype, SPAN)


@pytest.mark.parametrize("dtype", [INT32, FLOAT32], ids=str)
@pytest.mark.parametrize("name", [*O.OPERATORS, *O.UNARY_OPERATORS])
def test_every_row_runs_through_every_consumer(name, dtype):
    """The interpreter evaluates it (or refuses a float operand with R102, as the
    frontend does), the renderer spells it, the interval and Z3 visitors read it, and the
    interpreter's value is the row's exact meaning for integers."""
    from verify_reducer.spec.diagnostics import DiagnosticError
    row = O.OPERATORS.get(name) or O.UNARY_OPERATORS[name]
    e = _node(name, dtype)
    try:
        got = _interp(e)
    except DiagnosticError as err:
        assert dtype.is_float and row.floats is None and [d.code for d in err.diagnostics] == ["R102"]
        return
    if dtype.is_int and row.kind == O.BINARY:
        assert got == row.exact(7, 2)
    assert _cuda(e)
    iv = bounds.interval(e, None)
    if dtype.is_int and row.kind == O.BINARY:
        assert iv.lo <= got <= iv.hi
        term = bounds._Encoder(None).term(e)
        assert z3.simplify(term).is_int()
